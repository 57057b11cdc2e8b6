// Package kube builds the provider's Kubernetes clients from its settings, lazily, and performs
// the API calls and watch-based waits the resources need.
package kube

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Settings are the provider block's connection settings, with the same names and meaning as
// the kubernetes provider's: explicit values override the kubeconfig file's.
type Settings struct {
	ConfigPath            string
	ConfigPaths           []string
	ConfigContext         string
	ConfigContextAuthInfo string
	ConfigContextCluster  string

	Host                 string
	Username, Password   string
	Token                string
	ClusterCACertificate string
	ClientCertificate    string
	ClientKey            string
	Insecure             bool
	TLSServerName        string
	ProxyURL             string

	Exec *ExecSettings
}

// ExecSettings runs a credential plugin, as a kubeconfig's exec block does.
type ExecSettings struct {
	APIVersion string
	Command    string
	Args       []string
	Env        map[string]string
}

// RESTConfig resolves the settings into a client configuration. It reads files but makes no
// network call.
func (s Settings) RESTConfig() (*rest.Config, error) {
	overrides := &clientcmd.ConfigOverrides{}
	loader := &clientcmd.ClientConfigLoadingRules{}

	var paths []string
	if s.ConfigPath != "" {
		paths = append(paths, s.ConfigPath)
	}
	paths = append(paths, s.ConfigPaths...)
	for _, p := range paths {
		expanded, err := expandHome(p)
		if err != nil {
			return nil, err
		}
		if _, err := os.Stat(expanded); err != nil {
			return nil, fmt.Errorf("could not open kubeconfig %q: %w", p, err)
		}
		loader.Precedence = append(loader.Precedence, expanded)
	}
	if len(paths) > 0 {
		overrides.CurrentContext = s.ConfigContext
		overrides.Context = clientcmdapi.Context{AuthInfo: s.ConfigContextAuthInfo, Cluster: s.ConfigContextCluster}
	}

	overrides.ClusterInfo.InsecureSkipTLSVerify = s.Insecure
	overrides.ClusterInfo.TLSServerName = s.TLSServerName
	if s.ClusterCACertificate != "" {
		overrides.ClusterInfo.CertificateAuthorityData = []byte(s.ClusterCACertificate)
	}
	if s.ClientCertificate != "" {
		overrides.AuthInfo.ClientCertificateData = []byte(s.ClientCertificate)
	}
	if s.Host != "" {
		// The kubernetes provider accepts a bare host:port too; it means HTTPS.
		host := s.Host
		if !strings.Contains(host, "://") {
			host = "https://" + host
		}
		if _, err := url.Parse(host); err != nil {
			return nil, fmt.Errorf("host %q is not a valid URL: %w", s.Host, err)
		}
		overrides.ClusterInfo.Server = host
	}
	if s.Username != "" {
		overrides.AuthInfo.Username = s.Username
	}
	if s.Password != "" {
		overrides.AuthInfo.Password = s.Password
	}
	if s.ClientKey != "" {
		overrides.AuthInfo.ClientKeyData = []byte(s.ClientKey)
	}
	if s.Token != "" {
		overrides.AuthInfo.Token = s.Token
	}
	if s.ProxyURL != "" {
		if _, err := url.Parse(s.ProxyURL); err != nil {
			return nil, fmt.Errorf("proxy_url %q is not a valid URL: %w", s.ProxyURL, err)
		}
		overrides.ClusterInfo.ProxyURL = s.ProxyURL
	}
	if s.Exec != nil {
		exec := &clientcmdapi.ExecConfig{
			APIVersion:      s.Exec.APIVersion,
			Command:         s.Exec.Command,
			Args:            s.Exec.Args,
			InteractiveMode: clientcmdapi.IfAvailableExecInteractiveMode,
		}
		for name, value := range s.Exec.Env {
			exec.Env = append(exec.Env, clientcmdapi.ExecEnvVar{Name: name, Value: value})
		}
		overrides.AuthInfo.Exec = exec
	}

	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(loader, overrides).ClientConfig()
	if err != nil {
		if clientcmd.IsEmptyConfig(err) {
			return nil, fmt.Errorf("no Kubernetes cluster is configured: set config_path (or KUBE_CONFIG_PATH), or host with credentials, in the provider block")
		}
		return nil, fmt.Errorf("loading the Kubernetes client configuration: %w", err)
	}
	return cfg, nil
}

func expandHome(p string) (string, error) {
	if p == "~" || strings.HasPrefix(p, "~/") {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		return filepath.Join(home, strings.TrimPrefix(p, "~")), nil
	}
	return p, nil
}
