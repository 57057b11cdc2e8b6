// Builds the real node's pause image: the process every pod sandbox holds its namespaces with.
module github.com/kubetrain/terraform-provider-training/cluster/components/pause

go 1.24.0
