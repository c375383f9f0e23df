package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// TestRunCluster: skilljack-mcp --http=0 --cluster=URL joins the cluster
// at an embedded nats-server, leads it (the only replica), serves the
// cluster's catalog with the "cluster" field on /healthz, logs
// "cluster: leader", and on shutdown steps down and returns nil (issue 16).
func TestRunCluster(t *testing.T) {
	ns, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server not ready")
	}
	defer ns.Shutdown()
	dir := filepath.Join(t.TempDir(), "lib")
	writeFile(t, filepath.Join(dir, "ok", "SKILL.md"), skillBody("ok", "Fine."))
	var out, errs lockedBuffer
	env := map[string]string{"HOME": t.TempDir()}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--http=0", "--cluster=" + ns.ClientURL(), "--cluster-name=main", "--cluster-lease=1s", dir},
			io.NopCloser(strings.NewReader("")), nopWriteCloser{&out}, &errs, func(k string) string { return env[k] })
	}()
	defer func() { cancel(); <-done }()
	re := regexp.MustCompile(`msg=listening url=(http://\S+)/mcp`)
	var base string
	for deadline := time.Now().Add(20 * time.Second); base == ""; time.Sleep(20 * time.Millisecond) {
		if m := re.FindStringSubmatch(errs.String()); m != nil {
			base = m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("no listening line:\n%s", errs.String())
		}
	}
	var h struct {
		Status         string `json:"status"`
		CatalogVersion uint64 `json:"catalogVersion"`
		Skills         int    `json:"skills"`
		Cluster        struct {
			Name   string `json:"name"`
			Node   string `json:"node"`
			Leader bool   `json:"leader"`
		} `json:"cluster"`
	}
	for deadline := time.Now().Add(10 * time.Second); !h.Cluster.Leader; time.Sleep(20 * time.Millisecond) {
		resp, err := http.Get(base + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		json.NewDecoder(resp.Body).Decode(&h)
		resp.Body.Close()
		if time.Now().After(deadline) {
			t.Fatalf("never leader: %+v", h)
		}
	}
	if h.Status != "ok" || h.CatalogVersion != 1 || h.Skills < 1 || h.Cluster.Name != "main" || h.Cluster.Node == "" {
		t.Errorf("/healthz = %+v", h)
	}
	if !strings.Contains(errs.String(), "cluster: leader") {
		t.Errorf("no leader line:\n%s", errs.String())
	}
	cancel()
	select {
	case err := <-done:
		done <- err
		if err != nil {
			t.Errorf("run = %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("run did not return after cancel")
	}
	if !strings.Contains(errs.String(), "cluster: follower") {
		t.Errorf("no follower line at shutdown:\n%s", errs.String())
	}
	if out.String() != "" {
		t.Errorf("stdout written in HTTP mode: %q", out.String())
	}
}
