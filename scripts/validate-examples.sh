#!/usr/bin/env bash
# Runs `terraform validate` on every example under examples/ with the provider built from this
# tree (dev_overrides, no registry, no init), so an example that drifts from the schema fails.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$root" && go build -o "$work/bin/terraform-provider-training" .)
printf 'provider_installation {\n  dev_overrides {\n    "kubetrain/training" = "%s"\n  }\n  direct {}\n}\n' "$work/bin" > "$work/terraformrc"
status=0
while IFS= read -r dir; do
  case_dir=$work/case
  rm -rf "$case_dir" && mkdir -p "$case_dir"
  cp "$dir"/*.tf "$case_dir/"
  printf 'terraform {\n  required_providers {\n    training = { source = "kubetrain/training" }\n  }\n}\n' > "$case_dir/zz_providers.tf"
  if out=$(cd "$case_dir" && TF_CLI_CONFIG_FILE=$work/terraformrc terraform validate -no-color 2>&1); then
    echo "valid: ${dir#"$root"/}"
  else
    echo "INVALID: ${dir#"$root"/}"; echo "$out"; status=1
  fi
done < <(find "$root/examples" -name '*.tf' -printf '%h\n' | sort -u)
exit $status
