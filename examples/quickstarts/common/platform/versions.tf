terraform {
  required_version = ">= 1.8" # provider functions
  required_providers {
    helm = {
      source  = "hashicorp/helm"
      version = "~> 3.0"
    }
    kubernetes = {
      source  = "hashicorp/kubernetes"
      version = "~> 2.38"
    }
    http = {
      source  = "hashicorp/http"
      version = "~> 3.5"
    }
  }
}
