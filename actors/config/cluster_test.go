package config_test

import (
	"strings"
	"testing"
	"time"

	"github.com/skilljack/skilljack-mcp/actors/config"
)

// TestLoadCluster: the cluster rows (issue 16) read their flags and
// variables, default the name and lease, and refuse a bad name or a lease
// under the minimum with a warning and the default.
func TestLoadCluster(t *testing.T) {
	load := func(args []string, env map[string]string) (config.Settings, []config.Warning) {
		t.Helper()
		set, warnings, err := config.Load(config.LoadOptions{Args: args, Getenv: func(k string) string { return env[k] }, Home: t.TempDir(), Cwd: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		return set, warnings
	}
	set, _ := load(nil, nil)
	if set.Cluster.URL != "" || set.Cluster.Name != config.DefaultClusterName || set.Cluster.Lease != config.DefaultClusterLease {
		t.Errorf("defaults: %+v", set.Cluster)
	}
	set, _ = load([]string{"--cluster=nats://a:4222,nats://b:4222", "--cluster-name=prod_1", "--cluster-lease=1500ms"},
		map[string]string{"SKILLJACK_CLUSTER_TOKEN": "s3cr3t-token", "SKILLJACK_CLUSTER_TLS_CA": "/ca.pem"})
	want := config.Cluster{URL: "nats://a:4222,nats://b:4222", Name: "prod_1", Lease: 1500 * time.Millisecond, Token: "s3cr3t-token", TLSCA: "/ca.pem"}
	if set.Cluster != want {
		t.Errorf("cluster = %+v, want %+v", set.Cluster, want)
	}
	set, warnings := load([]string{"--cluster-name=a.b", "--cluster-lease=10ms"}, nil)
	if set.Cluster.Name != config.DefaultClusterName || set.Cluster.Lease != config.DefaultClusterLease {
		t.Errorf("bad values kept: %+v", set.Cluster)
	}
	var msgs []string
	for _, w := range warnings {
		msgs = append(msgs, w.Message)
	}
	all := strings.Join(msgs, "\n")
	if !strings.Contains(all, "--cluster-name is not a cluster name") || !strings.Contains(all, "--cluster-lease is below the minimum") {
		t.Errorf("warnings:\n%s", all)
	}
}
