terraform {
  required_providers {
    training = {
      source  = "kubetrain/training"
      version = "~> 0.1"
    }
  }
}
