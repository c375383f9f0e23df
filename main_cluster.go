package main

import (
	"log/slog"
	"path/filepath"
	"sync/atomic"

	"github.com/nats-io/nats.go"

	"github.com/skilljack/skilljack-mcp/actors"
	"github.com/skilljack/skilljack-mcp/actors/cluster"
	"github.com/skilljack/skilljack-mcp/actors/config"
	"github.com/skilljack/skilljack-mcp/events"
	"github.com/skilljack/skilljack-mcp/mcpface"
)

// clusterMember is this replica's cluster wiring (issue 16); the nil value
// is a single process, for which every method answers "no cluster".
type clusterMember struct {
	set  config.Cluster
	node string
	// sources are the locations of the sources this replica was started
	// with, as its startup line names them.
	sources []string
	nc      *nats.Conn
	files   *cluster.FileSource
	leader  atomic.Bool
}

// joinCluster connects to NATS when --cluster is set (without waiting for
// it: see [cluster.Connect]) and prepares the file source; nil without
// --cluster.
func joinCluster(set config.Settings, log *slog.Logger) (*clusterMember, error) {
	if set.Cluster.URL == "" {
		return nil, nil
	}
	m := &clusterMember{set: set.Cluster, node: cluster.NodeID(), sources: sourceLocations(set.Config)}
	nc, err := cluster.Connect(set.Cluster, m.node, log)
	if err != nil {
		// NATS unreachable is retried, not an error: this is the URL,
		// credentials or TLS files — a usage error.
		return nil, &exitError{2, err}
	}
	m.nc = nc
	files, err := cluster.NewFileSource(nc, set.Cluster.Name, clusterCacheDir(set.Config, set.Cluster.Name), 0, log)
	if err != nil {
		nc.Close()
		return nil, err
	}
	m.files = files
	log.Info("cluster: joining", "cluster", set.Cluster.Name, "node", m.node, "lease", set.Cluster.Lease)
	return m, nil
}

// close closes the NATS connection and the file cache.
func (m *clusterMember) close() {
	if m == nil {
		return
	}
	m.files.Close()
	m.nc.Close()
}

// servedTopic is the topic of the catalogs the facade serves.
func (m *clusterMember) servedTopic() string {
	if m == nil {
		return events.TopicCatalogChanged
	}
	return events.TopicCatalogServed
}

// pipelineOptions are the pipeline's cluster options.
func (m *clusterMember) pipelineOptions() *actors.ClusterOptions {
	if m == nil {
		return nil
	}
	return &actors.ClusterOptions{Conn: m.nc, Name: m.set.Name, Node: m.node, Lease: m.set.Lease,
		OnLeader: m.leader.Store, Sources: m.sources}
}

// fileSource is where the facade reads file bytes: the object store in a
// cluster, nil (the disk) otherwise.
func (m *clusterMember) fileSource() mcpface.FileSource {
	if m == nil {
		return nil
	}
	return m.files
}

// health is the "cluster" field of /healthz; nil outside a cluster.
func (m *clusterMember) health() func() mcpface.ClusterHealth {
	if m == nil {
		return nil
	}
	return func() mcpface.ClusterHealth {
		return mcpface.ClusterHealth{Name: m.set.Name, Node: m.node, Leader: m.leader.Load()}
	}
}

// clusterCacheDir is the folder of the file source's disk cache: beside
// the remote caches, in .cluster-<name> (a dot folder, never scanned);
// "" (no disk cache) when the configuration names no cache folder.
func clusterCacheDir(cfg config.Config, name string) string {
	if cfg.WellKnown.CacheDir == "" {
		return ""
	}
	return filepath.Join(filepath.Dir(cfg.WellKnown.CacheDir), ".cluster-"+name)
}
