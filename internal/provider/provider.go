// Package provider is the Terraform glue of the training provider: schemas, conversions between
// Terraform models and the plain specs of internal/jobs, and diagnostics.
package provider

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/hashicorp/terraform-plugin-framework/action"

	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/function"
	"github.com/hashicorp/terraform-plugin-framework/list"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
	"github.com/kubetrain/terraform-provider-training/internal/kube"
	"github.com/kubetrain/terraform-provider-training/internal/kueue"
)

var (
	_ provider.Provider              = (*trainingProvider)(nil)
	_ provider.ProviderWithFunctions = (*trainingProvider)(nil)
)

// New returns the provider factory for the given release version.
func New(version string) func() provider.Provider {
	return func() provider.Provider { return &trainingProvider{version: version} }
}

// providerTypeName prefixes the provider's resource and data source type names.
const providerTypeName = "training"

type trainingProvider struct {
	version string
	// configured is what Configure handed the resources last, for the refreshes and validations
	// that the server answers apart from the framework (internal/shortcuts).
	configured atomic.Pointer[providerData]
}

// ResourceData is what Configure handed the resources last, nil before it ran
// (shortcuts.ProviderWithResourceData).
func (p *trainingProvider) ResourceData() any {
	if d := p.configured.Load(); d != nil {
		return d
	}
	return nil
}

type providerModel struct {
	ConfigPath            types.String  `tfsdk:"config_path"`
	ConfigPaths           types.List    `tfsdk:"config_paths"`
	ConfigContext         types.String  `tfsdk:"config_context"`
	ConfigContextAuthInfo types.String  `tfsdk:"config_context_auth_info"`
	ConfigContextCluster  types.String  `tfsdk:"config_context_cluster"`
	Host                  types.String  `tfsdk:"host"`
	Username              types.String  `tfsdk:"username"`
	Password              types.String  `tfsdk:"password"`
	Token                 types.String  `tfsdk:"token"`
	ClusterCACertificate  types.String  `tfsdk:"cluster_ca_certificate"`
	ClientCertificate     types.String  `tfsdk:"client_certificate"`
	ClientKey             types.String  `tfsdk:"client_key"`
	Insecure              types.Bool    `tfsdk:"insecure"`
	TLSServerName         types.String  `tfsdk:"tls_server_name"`
	ProxyURL              types.String  `tfsdk:"proxy_url"`
	PlacementCheck        types.Bool    `tfsdk:"placement_check"`
	AdmissionPrediction   types.Bool    `tfsdk:"admission_prediction"`
	Exec                  []execModel   `tfsdk:"exec"`
	WorkerClusters        []workerModel `tfsdk:"worker_cluster"`
}

// workerModel is a MultiKueue worker cluster the provider reads dispatched jobs from.
type workerModel struct {
	Name          types.String `tfsdk:"name"`
	ConfigPath    types.String `tfsdk:"config_path"`
	ConfigContext types.String `tfsdk:"config_context"`
}

type execModel struct {
	APIVersion types.String `tfsdk:"api_version"`
	Command    types.String `tfsdk:"command"`
	Args       types.List   `tfsdk:"args"`
	Env        types.Map    `tfsdk:"env"`
}

func (p *trainingProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = providerTypeName
	resp.Version = p.version
}

func (p *trainingProvider) Schema(_ context.Context, _ provider.SchemaRequest, resp *provider.SchemaResponse) {
	str := func(desc string, sensitive bool) schema.StringAttribute {
		return schema.StringAttribute{Optional: true, Sensitive: sensitive, MarkdownDescription: desc}
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "Declares distributed training jobs (" + kindList() + ") on a Kubernetes cluster. " +
			"Connection settings have the names and environment variables of the `kubernetes` provider; " +
			"the cluster is contacted only when a job is read, created, changed or deleted.",
		Attributes: map[string]schema.Attribute{
			"config_path": str("Path to a kubeconfig file. Environment: `KUBE_CONFIG_PATH`.", false),
			"config_paths": schema.ListAttribute{ElementType: types.StringType, Optional: true,
				MarkdownDescription: "Paths to kubeconfig files, merged in order. Environment: `KUBE_CONFIG_PATHS` (separated by `:`)."},
			"config_context":           str("The kubeconfig context to use. Environment: `KUBE_CTX`.", false),
			"config_context_auth_info": str("The user of the kubeconfig context to use. Environment: `KUBE_CTX_AUTH_INFO`.", false),
			"config_context_cluster":   str("The cluster of the kubeconfig context to use. Environment: `KUBE_CTX_CLUSTER`.", false),
			"host":                     str("The API server's address, overriding the kubeconfig's. Environment: `KUBE_HOST`.", false),
			"username":                 str("Username for basic authentication. Environment: `KUBE_USER`.", false),
			"password":                 str("Password for basic authentication. Environment: `KUBE_PASSWORD`.", true),
			"token":                    str("Bearer token. Environment: `KUBE_TOKEN`.", true),
			"cluster_ca_certificate":   str("PEM-encoded root certificates of the API server. Environment: `KUBE_CLUSTER_CA_CERT_DATA`.", false),
			"client_certificate":       str("PEM-encoded client certificate. Environment: `KUBE_CLIENT_CERT_DATA`.", false),
			"client_key":               str("PEM-encoded client key. Environment: `KUBE_CLIENT_KEY_DATA`.", true),
			"insecure": schema.BoolAttribute{Optional: true,
				MarkdownDescription: "Skip TLS verification of the API server. Environment: `KUBE_INSECURE`. Off by default."},
			"tls_server_name": str("Server name for TLS verification of the API server. Environment: `KUBE_TLS_SERVER_NAME`.", false),
			"proxy_url":       str("URL of a proxy to reach the API server through (sensitive: it may carry credentials, `http://user:password@proxy:3128`). Environment: `KUBE_PROXY_URL`.", true),
			"placement_check": schema.BoolAttribute{Optional: true,
				MarkdownDescription: "Whether plans check that a job's pods fit the cluster's nodes: for each job that is created or changed, " +
					"each role's pod is checked with the scheduler's rules (taints it does not tolerate, node selector and affinity, " +
					"unschedulable and not Ready nodes, allocatable GPUs, CPU and memory per node, and the nodes' room for all its pods at once), " +
					"and the plan warns, naming the cause and the fix. Never an error: the cluster may change before apply. The nodes are listed " +
					"once per plan; when the cluster cannot be reached or nodes cannot be listed the check is skipped (debug log). Default true."},
			"admission_prediction": schema.BoolAttribute{Optional: true,
				MarkdownDescription: "Whether the plan of a job with `queue_name` that makes pods (a create or a replacement) checks it against " +
					"Kueue: whether Kueue manages its kind and counts what it asks for, as Kueue's configuration says (its ConfigMap " +
					"`kueue-system/kueue-manager-config`, which the role `terraform-provider-training-kueue-config` grants reading), whether the " +
					"queues the configuration declares could ever admit it, and what Kueue would do with it now (see `queue_name`). The " +
					"prediction lists Kueue's queues and every namespace's Workloads, page by page, which the role " +
					"`terraform-provider-training-admission-prediction` grants; without it each such plan warns that it cannot predict. False " +
					"turns every one of these checks of a job off, and with them the Workload list. Default true."},
		},
		Blocks: map[string]schema.Block{
			"exec": schema.ListNestedBlock{
				MarkdownDescription: "A credential plugin run to get a token, as in a kubeconfig's `exec` section. At most one.",
				Validators:          []validator.List{listvalidator.SizeAtMost(1)},
				NestedObject: schema.NestedBlockObject{Attributes: map[string]schema.Attribute{
					"api_version": schema.StringAttribute{Required: true, MarkdownDescription: "API version of the ExecCredential, e.g. `client.authentication.k8s.io/v1beta1`."},
					"command":     schema.StringAttribute{Required: true, MarkdownDescription: "The command to run."},
					"args":        schema.ListAttribute{ElementType: types.StringType, Optional: true, MarkdownDescription: "Its arguments."},
					"env": schema.MapAttribute{ElementType: types.StringType, Optional: true, Sensitive: true,
						MarkdownDescription: "Environment variables to set for it (sensitive: they often carry credentials)."},
				}},
			},
			"worker_cluster": schema.ListNestedBlock{
				MarkdownDescription: "A MultiKueue worker cluster of this (manager) cluster's Kueue, for the jobs it dispatches there. " +
					"A queued job whose ClusterQueue has a MultiKueue admission check is created here and runs as a copy in the worker " +
					"cluster Kueue picks, which the job's `worker_cluster` names; with that cluster given here, the job's `instances` " +
					"are its pods there, `wait_for = \"running\"` waits for them, and destroy waits until the copy is gone there too. " +
					"Without it those read nothing of the worker, and the job's `instances` stay empty. Only read, never written: " +
					"the provider makes nothing in a worker cluster (declare the worker's queues with a second, aliased provider).",
				NestedObject: schema.NestedBlockObject{Attributes: map[string]schema.Attribute{
					"name": schema.StringAttribute{Required: true,
						MarkdownDescription: "The name of its `training_multikueue_cluster` (Kueue's `MultiKueueCluster`), as a job's `worker_cluster` reads."},
					"config_path": schema.StringAttribute{Required: true,
						MarkdownDescription: "Path to a kubeconfig file of the worker cluster, with which the provider reads it."},
					"config_context": schema.StringAttribute{Optional: true,
						MarkdownDescription: "The context of that kubeconfig to use; its current context if unset."},
				}},
			},
		},
	}
}

func (p *trainingProvider) Configure(ctx context.Context, req provider.ConfigureRequest, resp *provider.ConfigureResponse) {
	var m providerModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if unknown := m.unknownSettings(); len(unknown) > 0 {
		// Never the KUBE_* environment in their place: it may name another cluster, where a
		// refresh would find nothing and plan to create everything.
		tflog.Info(ctx, "provider settings unknown until apply", map[string]any{"settings": unknown})
		data := &providerData{client: kube.NewUnknownClient(unknown), placementCheck: m.placementCheck(), admissionPrediction: m.admissionPrediction(),
			declared: kueue.NewDeclared()}
		resp.ResourceData, resp.DataSourceData, resp.ListResourceData, resp.ActionData = data, data, data, data
		p.configured.Store(data)
		return
	}
	s := kube.Settings{
		ConfigPath:            stringOrEnv(m.ConfigPath, "KUBE_CONFIG_PATH"),
		ConfigContext:         stringOrEnv(m.ConfigContext, "KUBE_CTX"),
		ConfigContextAuthInfo: stringOrEnv(m.ConfigContextAuthInfo, "KUBE_CTX_AUTH_INFO"),
		ConfigContextCluster:  stringOrEnv(m.ConfigContextCluster, "KUBE_CTX_CLUSTER"),
		Host:                  stringOrEnv(m.Host, "KUBE_HOST"),
		Username:              stringOrEnv(m.Username, "KUBE_USER"),
		Password:              stringOrEnv(m.Password, "KUBE_PASSWORD"),
		Token:                 stringOrEnv(m.Token, "KUBE_TOKEN"),
		ClusterCACertificate:  stringOrEnv(m.ClusterCACertificate, "KUBE_CLUSTER_CA_CERT_DATA"),
		ClientCertificate:     stringOrEnv(m.ClientCertificate, "KUBE_CLIENT_CERT_DATA"),
		ClientKey:             stringOrEnv(m.ClientKey, "KUBE_CLIENT_KEY_DATA"),
		TLSServerName:         stringOrEnv(m.TLSServerName, "KUBE_TLS_SERVER_NAME"),
		ProxyURL:              stringOrEnv(m.ProxyURL, "KUBE_PROXY_URL"),
	}
	resp.Diagnostics.Append(m.ConfigPaths.ElementsAs(ctx, &s.ConfigPaths, true)...)
	if len(s.ConfigPaths) == 0 {
		if v := os.Getenv("KUBE_CONFIG_PATHS"); v != "" {
			s.ConfigPaths = filepath.SplitList(v)
		}
	}
	if !m.Insecure.IsNull() {
		s.Insecure = m.Insecure.ValueBool()
	} else if v := os.Getenv("KUBE_INSECURE"); v != "" {
		insecure, err := strconv.ParseBool(v)
		if err != nil {
			resp.Diagnostics.AddError("Invalid KUBE_INSECURE", "KUBE_INSECURE must be true or false, not "+strconv.Quote(v)+".")
		}
		s.Insecure = insecure
	}
	if len(m.Exec) > 0 {
		e := m.Exec[0]
		s.Exec = &kube.ExecSettings{APIVersion: e.APIVersion.ValueString(), Command: e.Command.ValueString()}
		resp.Diagnostics.Append(e.Args.ElementsAs(ctx, &s.Exec.Args, true)...)
		resp.Diagnostics.Append(e.Env.ElementsAs(ctx, &s.Exec.Env, true)...)
	}
	if resp.Diagnostics.HasError() {
		return
	}
	// Which credentials are set is logged, never their values.
	tflog.Debug(ctx, "configuring the Kubernetes client", map[string]any{
		"config_path": s.ConfigPath, "config_paths": s.ConfigPaths, "config_context": s.ConfigContext,
		"host": s.Host, "insecure": s.Insecure, "token_set": s.Token != "", "password_set": s.Password != "",
		"client_key_set": s.ClientKey != "", "exec_set": s.Exec != nil,
	})
	// No connection is made here: the client connects on its first call.
	client := kube.NewClient(s)
	workers := map[string]*kube.Client{}
	for _, w := range m.WorkerClusters {
		name := w.Name.ValueString()
		if _, twice := workers[name]; twice {
			resp.Diagnostics.AddError("Invalid worker_cluster", fmt.Sprintf("The worker cluster %q is given twice: each MultiKueueCluster has one kubeconfig.", name))
			return
		}
		workers[name] = kube.NewClient(kube.Settings{ConfigPath: w.ConfigPath.ValueString(), ConfigContext: w.ConfigContext.ValueString()})
	}
	client.SetWorkers(workers)
	data := &providerData{client: client, placementCheck: m.placementCheck(), admissionPrediction: m.admissionPrediction(), declared: kueue.NewDeclared()}
	resp.ResourceData, resp.DataSourceData, resp.ListResourceData, resp.ActionData = data, data, data, data
	p.configured.Store(data)
}

// placementCheck is placement_check: true unless set to false.
func (m providerModel) placementCheck() bool { return trueUnlessFalse(m.PlacementCheck) }

// admissionPrediction is admission_prediction: true unless set to false.
func (m providerModel) admissionPrediction() bool { return trueUnlessFalse(m.AdmissionPrediction) }

func trueUnlessFalse(b types.Bool) bool { return b.IsNull() || b.IsUnknown() || b.ValueBool() }

// unknownSettings names the settings whose values are not known yet.
func (m providerModel) unknownSettings() []string {
	var names []string
	for name, v := range map[string]attr.Value{
		"config_path": m.ConfigPath, "config_paths": m.ConfigPaths, "config_context": m.ConfigContext,
		"config_context_auth_info": m.ConfigContextAuthInfo, "config_context_cluster": m.ConfigContextCluster, "host": m.Host,
		"username": m.Username, "password": m.Password, "token": m.Token, "cluster_ca_certificate": m.ClusterCACertificate,
		"client_certificate": m.ClientCertificate, "client_key": m.ClientKey, "insecure": m.Insecure, "tls_server_name": m.TLSServerName,
		"proxy_url": m.ProxyURL,
	} {
		if unknownIn(v) {
			names = append(names, name)
		}
	}
	for _, w := range m.WorkerClusters {
		for name, v := range map[string]attr.Value{"worker_cluster.name": w.Name, "worker_cluster.config_path": w.ConfigPath, "worker_cluster.config_context": w.ConfigContext} {
			if unknownIn(v) {
				names = append(names, name)
			}
		}
	}
	for _, e := range m.Exec {
		for name, v := range map[string]attr.Value{"exec.api_version": e.APIVersion, "exec.command": e.Command, "exec.args": e.Args, "exec.env": e.Env} {
			if unknownIn(v) {
				names = append(names, name)
			}
		}
	}
	sort.Strings(names)
	return names
}

// unknownIn says whether v, or an element of it, is unknown.
func unknownIn(v attr.Value) bool {
	if v.IsUnknown() {
		return true
	}
	var elements []attr.Value
	switch c := v.(type) {
	case types.List:
		elements = c.Elements()
	case types.Map:
		for _, e := range c.Elements() {
			elements = append(elements, e)
		}
	}
	return slices.ContainsFunc(elements, attr.Value.IsUnknown)
}

func stringOrEnv(v types.String, env string) string {
	if !v.IsNull() && !v.IsUnknown() {
		return v.ValueString()
	}
	return os.Getenv(env)
}

func (p *trainingProvider) Resources(context.Context) []func() resource.Resource {
	return append(slices.Clone(jobResources),
		newRuntimeResource,
		newNodeTaintResource,
		newTopologyResource,
		newWorkloadPriorityClassResource,
		newCohortResource,
		newProvisioningRequestConfigResource,
		newMultiKueueClusterResource,
		newMultiKueueConfigResource,
		newAdmissionCheckResource,
		newResourceFlavorResource,
		newClusterQueueResource,
		newLocalQueueResource,
	)
}

// jobResources are the resources of the job kinds, one for each kind in jobs.Kinds(); the list
// resources are made from them.
var jobResources = []func() resource.Resource{
	newMPIJobResource,
	newTFJobResource,
	newPyTorchJobResource,
	newElasticJobResource,
	newTrainJobResource,
}

// Functions are the provider's functions (Terraform 1.8+, OpenTofu 1.7+).
func (p *trainingProvider) Functions(context.Context) []func() function.Function {
	return []func() function.Function{newQueueProblemsFunction}
}

// ListResources are the list resources of `terraform query` (Terraform 1.14+).
func (p *trainingProvider) ListResources(context.Context) []func() list.ListResource {
	return listResources()
}

// Actions are the provider's actions (Terraform 1.14 and later).
func (p *trainingProvider) Actions(context.Context) []func() action.Action {
	return []func() action.Action{newRestartJobAction, newRequeueJobAction, newSuspendJobAction, newResumeJobAction,
		newStopQueueAction, newResumeQueueAction}
}

func (p *trainingProvider) DataSources(context.Context) []func() datasource.DataSource {
	return []func() datasource.DataSource{
		newNodesDataSource,
		newJobDataSource,
		newClusterQueueDataSource,
		newLocalQueueDataSource,
		newRuntimeDataSource,
	}
}

// kindList names the kinds of job the provider manages, from the registry.
func kindList() string {
	var names []string
	for _, k := range jobs.Kinds() {
		names = append(names, k.Object)
	}
	return strings.Join(names, ", ")
}
