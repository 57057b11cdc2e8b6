# A company's GPUs as a tree: the research department owns 16 A100s and lends at most 8 of them
# to the rest of the company; its two teams own 4 each and borrow the department's rest, the
# vision team no more than 8. Under fair sharing (where Kueue's configuration enables it) the
# vision team gets twice the speech team's share of what both borrow.
resource "training_resource_flavor" "a100" {
  name        = "a100"
  node_labels = { "cloud.example.com/accelerator" = "a100" }
}

resource "training_cohort" "company" {
  name = "company"
}

resource "training_cohort" "research" {
  name   = "research"
  parent = training_cohort.company.name

  resource_group {
    covered_resources = ["nvidia.com/gpu"]
    flavor {
      name = training_resource_flavor.a100.name
      resource {
        name          = "nvidia.com/gpu"
        nominal_quota = "16"
        lending_limit = "8"
      }
    }
  }
}

resource "training_cluster_queue" "vision" {
  name                = "vision"
  cohort              = training_cohort.research.name
  fair_sharing_weight = "2"

  resource_group {
    covered_resources = ["nvidia.com/gpu"]
    flavor {
      name = training_resource_flavor.a100.name
      resource {
        name            = "nvidia.com/gpu"
        nominal_quota   = "4"
        borrowing_limit = "8"
      }
    }
  }
}

resource "training_cluster_queue" "speech" {
  name   = "speech"
  cohort = training_cohort.research.name

  resource_group {
    covered_resources = ["nvidia.com/gpu"]
    flavor {
      name = training_resource_flavor.a100.name
      resource {
        name          = "nvidia.com/gpu"
        nominal_quota = "4"
      }
    }
  }
}
