package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/mapplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kubetrain/terraform-provider-training/internal/kueue"
)

// What the Kueue resources (training_resource_flavor, training_cluster_queue,
// training_local_queue: one file each) share.

var (
	_ resource.ResourceWithImportState  = (*objectResource[flavorModel, *flavorModel])(nil)
	_ resource.ResourceWithUpgradeState = (*objectResource[flavorModel, *flavorModel])(nil)
)

// clusterScopedID checks the import ID of a cluster-scoped object: its name alone.
func clusterScopedID(id string) error {
	if id == "" || strings.Contains(id, "/") {
		return fmt.Errorf("import ID %q is not the object's name (it is cluster-scoped: no namespace)", id)
	}
	return nil
}

var (
	replaceName      = []planmodifier.String{stringplanmodifier.RequiresReplace()}
	keepID           = []planmodifier.String{stringplanmodifier.UseStateForUnknown()}
	keepCount        = []planmodifier.Int64{int64planmodifier.UseStateForUnknown()}
	keepMap          = []planmodifier.Map{mapplanmodifier.UseStateForUnknown()}
	keepString       = []planmodifier.String{stringplanmodifier.UseStateForUnknown()}
	kueueObjectNames = []validator.String{objectNameRule}
)

// stopPolicyUnset says what a queue's stop_policy left unset does.
const stopPolicyUnset = " Unset, Terraform leaves it as the cluster has it (Kueue's `None` when the queue is created), so that the " +
	"actions `training_stop_queue` and `training_resume_queue` stop and resume admissions without a change to plan; set, it is " +
	"Terraform's, and the next apply sets it back (the plan shows it)."

// kueueDeleteHint says what holds a Kueue object after its deletion.
const kueueDeleteHint = "Kueue keeps a flavor or queue while workloads admitted through it still run (its finalizer " +
	"kueue.x-k8s.io/resource-in-use); it goes once they are done."

// kueueTimeouts is the timeouts block of the Kueue resources, as the job resources have it.
func kueueTimeouts(ctx context.Context) schema.Block {
	return timeouts.Block(ctx, timeouts.Opts{Create: true, Update: true, Delete: true})
}

// idAttribute is a Kueue resource's id, described as what.
func idAttribute(what string) schema.StringAttribute {
	return schema.StringAttribute{Computed: true, PlanModifiers: keepID, MarkdownDescription: what}
}

// queueStatusModel is what ClusterQueues and LocalQueues report of their workloads.
type queueStatusModel struct {
	PendingWorkloads   types.Int64 `tfsdk:"pending_workloads"`
	ReservingWorkloads types.Int64 `tfsdk:"reserving_workloads"`
	AdmittedWorkloads  types.Int64 `tfsdk:"admitted_workloads"`
}

// queueStatusAttributes adds the queue status attributes to attrs.
func queueStatusAttributes(attrs map[string]schema.Attribute) map[string]schema.Attribute {
	attrs["pending_workloads"] = schema.Int64Attribute{Computed: true, PlanModifiers: keepCount,
		MarkdownDescription: "Workloads waiting for admission, at the last refresh."}
	attrs["reserving_workloads"] = schema.Int64Attribute{Computed: true, PlanModifiers: keepCount,
		MarkdownDescription: "Workloads holding quota, at the last refresh."}
	attrs["admitted_workloads"] = schema.Int64Attribute{Computed: true, PlanModifiers: keepCount,
		MarkdownDescription: "Workloads admitted (running), at the last refresh."}
	return attrs
}

// set records the queue's status.
func (s *queueStatusModel) set(st kueue.QueueStatus) {
	s.PendingWorkloads = types.Int64Value(st.Pending)
	s.ReservingWorkloads = types.Int64Value(st.Reserving)
	s.AdmittedWorkloads = types.Int64Value(st.Admitted)
}
