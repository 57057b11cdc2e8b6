// Builds the nslookup of the real node's stand-in for alpine:3.10 (training-operator's PyTorchJob
// init container image).
module github.com/kubetrain/terraform-provider-training/cluster/components/nslookup

go 1.24.0
