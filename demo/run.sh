#!/usr/bin/env bash
# make demo: the product end to end on the local cluster, with the real terraform CLI and no
# registry. It starts the cluster only if none is running, and stops it only if it started it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cluster_dir=${CLUSTER_DIR:-$root/.cluster}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

step_start=0
step() { step_start=$EPOCHREALTIME; printf '\n\033[1m==> %s\033[0m\n' "$*"; }
took() { awk -v a="$step_start" -v b="$EPOCHREALTIME" 'BEGIN { printf "    (%.1f s)\n", b - a }'; }

step "Building release 0.1.0 of the provider, installed by terraform init from its filesystem mirror"
(cd "$root" && go run ./tools/release -version 0.1.0 -dist "$work/dist" -platforms "$(go env GOOS)_$(go env GOARCH)")
cat > "$work/terraformrc" <<TFRC
provider_installation {
  filesystem_mirror {
    path    = "$work/dist/mirror"
    include = ["registry.terraform.io/kubetrain/training"]
  }
  direct {
    exclude = ["registry.terraform.io/kubetrain/training"]
  }
}
TFRC
export TF_CLI_CONFIG_FILE=$work/terraformrc TF_IN_AUTOMATION=1
took

step "Starting the local cluster (or reusing a running one)"
up_log=$work/up.log
# As root the cluster has its real node, where the elastic job trains for real.
real_node=()
[ "$(id -u)" = 0 ] && real_node=(--real-node)
(cd "$root/cluster" && go run ./cmd/localcluster up --dir "$cluster_dir" "${real_node[@]}") 2> >(tee "$up_log" >&2) > "$work/env"
# shellcheck disable=SC1091
. "$work/env"
training_image=${TRAINING_IMAGE_TRAINING_ETCD:-}
started=1
grep -q "already running" "$up_log" && started=0
kubeconfig=$cluster_dir/run/kubeconfig
took
stop_cluster() {
  if [ "$started" = 1 ]; then
    step "Stopping the cluster this demo started"
    (cd "$root/cluster" && go run ./cmd/localcluster down --dir "$cluster_dir")
    took
  fi
}
trap 'stop_cluster; rm -rf "$work"' EXIT

if [ -n "$training_image" ]; then
  # The checkpoint folder the elastic job's pods share, empty for each demo.
  rm -rf "$cluster_dir/checkpoint"
  (cd "$root/cluster" && go run ./cmd/localcluster volume --dir "$cluster_dir" pet-checkpoint "$cluster_dir/checkpoint")
  echo "    the elastic job trains on the real node ($training_image)"
else
  echo "    no real node (not root): the elastic job runs on the simulated GPU nodes, where no container starts"
fi

mkdir -p "$work/config" && cp "$root/demo/main.tf" "$work/config/"
cd "$work/config"
terraform init -input=false -no-color | grep -E 'Installed|Installing' || true
tf() { terraform "$@" -var "kubeconfig=$kubeconfig" -var "training_image=$training_image"; }

# progress N: waits until the training program reports steps at N workers, then prints the
# last of its progress lines (JSON, from the pods' logs).
progress() {
  [ -n "$training_image" ] || return 0
  if ! command -v kubectl >/dev/null; then echo "    (kubectl is not installed: the training's progress lines are not shown)"; return 0; fi
  local lines=""
  for _ in $(seq 240); do
    lines=$(for p in $(kubectl --kubeconfig "$kubeconfig" get pods -n default -l FC_FRAMEWORK_NAME=pet,FC_TASKROLE_NAME=worker -o name); do
      kubectl --kubeconfig "$kubeconfig" logs -n default "$p" 2>/dev/null | grep '^{"event"' || true; done)
    grep -q "\"step\".*\"world_size\": $1}" <<<"$lines" && break
    sleep 1
  done
  grep -E "\"start\"|\"world_size\": $1}" <<<"$lines" | grep -E '"start"|"step"' | tail -n 6 | sed 's/^/    /'
}

step "terraform apply: an MPI job tolerating ssd_node, an elastic PyTorch job with 4 workers, and a Trainer v2 TrainJob of 2 nodes on a runtime"
tf apply -auto-approve -no-color | grep -E '^(training_|Apply complete)'
took

step "Where each instance runs (terraform output, from the provider's computed attributes)"
terraform output -raw instances; echo
progress 4

step "terraform plan with elastic_workers = 2: an in-place update (~), not a replacement"
tf plan -no-color -var elastic_workers=2 | grep -E '(~|#) |Plan:|worker_count'
took

step "terraform apply: rescale the elastic job 4 -> 2 in place; the training goes on from its checkpoint"
tf apply -auto-approve -no-color -var elastic_workers=2 | grep -E '^(training_|Apply complete)'
took
terraform output -raw instances; echo
progress 2

step "terraform apply: rescale the elastic job 2 -> 3 in place"
tf apply -auto-approve -no-color -var elastic_workers=3 | grep -E '^(training_|Apply complete)'
took
progress 3

step "terraform destroy: the jobs, the etcd, the Services, the runtime and every pod"
tf destroy -auto-approve -no-color -var elastic_workers=3 | grep -E '^(training_|Destroy complete)'
took

step "What is left in the cluster"
if command -v kubectl >/dev/null; then
  left=$(kubectl --kubeconfig "$kubeconfig" get mpijobs,frameworks,trainjobs,jobsets,services,pods -n default --no-headers 2>&1 | grep -v '^service/kubernetes ' || true)
  if [ -z "$left" ]; then echo "    no MPIJob, Framework, TrainJob, JobSet, Service or pod is left"; else echo "$left"; exit 1; fi
else
  echo "kubectl is not installed; skipping the look at the cluster"
fi
