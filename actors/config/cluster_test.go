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

// TestClusterURLRefused: --cluster takes only NATS URLs (issue 16: a typo
// must not retry a non-existent host for ever or join over another
// scheme); each bad form is refused with a reason naming it, never showing
// a token in the URL.
func TestClusterURLRefused(t *testing.T) {
	for _, tc := range []struct{ value, why string }{
		{"notaurl", "is not a NATS URL"},
		{"nats://127.0.0.1:99999", `has the port "99999"`},
		{"nats://127.0.0.1:0", `has the port "0"`},
		{"http://127.0.0.1:4222", `has the scheme "http"`},
		{"ftp://s3cr3t@host:4222", `has the scheme "ftp" in "ftp://…@host:4222"`},
		{"nats://a:4222,,nats://b:4222", "has an empty URL"},
		{"nats://:4222", "is not a NATS URL"},
	} {
		set, warnings, err := config.Load(config.LoadOptions{Args: []string{"--cluster=" + tc.value}, Getenv: func(string) string { return "" }, Home: t.TempDir(), Cwd: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		var refused []string
		for _, w := range warnings {
			if w.Refuse {
				refused = append(refused, w.Message)
			}
		}
		all := strings.Join(refused, "\n")
		if set.Cluster.URL != "" || !strings.Contains(all, "--cluster "+tc.why) || strings.Contains(all, "s3cr3t") {
			t.Errorf("--cluster=%s: URL %q, refusals:\n%s\nwant one with %q", tc.value, set.Cluster.URL, all, tc.why)
		}
	}
	for _, ok := range []string{"nats://a:4222", "tls://a:4222, nats://[::1]:4222", "ws://a", "wss://user:pw@a:443"} {
		set, warnings, _ := config.Load(config.LoadOptions{Args: []string{"--cluster=" + ok}, Getenv: func(string) string { return "" }, Home: t.TempDir(), Cwd: t.TempDir()})
		if set.Cluster.URL == "" || len(warnings) != 0 {
			t.Errorf("--cluster=%s refused: %+v", ok, warnings)
		}
	}
}
