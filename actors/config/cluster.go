package config

import (
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Cluster is the cluster-mode part of [Settings] (issue 16): several HTTP
// replicas sharing one catalog through NATS JetStream. The zero value (URL
// empty) is a single process with no NATS traffic.
type Cluster struct {
	// URL is --cluster / SKILLJACK_CLUSTER_URL: the NATS server URL(s),
	// comma-separated ("nats://host:4222"). Empty turns cluster mode off.
	URL string
	// Name is --cluster-name / SKILLJACK_CLUSTER_NAME: the namespace every
	// bucket, stream and subject name is derived from; letters, digits, '-'
	// and '_'. Defaults to [DefaultClusterName].
	Name string
	// Creds is a NATS credentials file (--cluster-creds); empty for none.
	Creds string
	// Token is a NATS token (--cluster-token); a secret, never logged.
	Token string
	// TLSCA, TLSCert and TLSKey are PEM files: the CA that signs the
	// server's certificate, and a client certificate and its key (mutual
	// TLS). Empty for none.
	TLSCA, TLSCert, TLSKey string
	// Lease is the leader lease's time to live (--cluster-lease), renewed
	// every third of it. Defaults to [DefaultClusterLease].
	Lease time.Duration
}

// Defaults of the cluster settings (issue 16).
const (
	// DefaultClusterName is the namespace when --cluster-name is not given.
	DefaultClusterName = "skilljack"
	// DefaultClusterLease is the leader lease: a crashed leader is replaced
	// within it (plus a renewal period), while renewals every 5 s stay
	// negligible traffic and survive a NATS hiccup of a few seconds.
	DefaultClusterLease = 15 * time.Second
	// MinClusterLease is the shortest lease accepted: below it, a renewal
	// every third of it competes with ordinary NATS latency.
	MinClusterLease = 300 * time.Millisecond
)

// clusterSettings are the rows of the cluster mode (issue 16).
func clusterSettings() []Setting {
	return []Setting{
		{Flag: "--cluster", Arg: "URL", Env: []string{"SKILLJACK_CLUSTER_URL"}, DefaultDoc: "off", Table: TableServe,
			Doc:   "HTTP only: join a cluster of replicas over NATS JetStream (`nats://host:4222`, comma list for several servers); one leader polls and watches the sources, every replica serves the same catalog version (see \"Running a cluster\")",
			Usage: "HTTP only: join a cluster of replicas over NATS JetStream", Refuse: true,
			parse: clusterURLParser{}, set: to(func(s *Settings) *string { return &s.Cluster.URL })},
		{Flag: "--cluster-name", Arg: "NAME", Env: []string{"SKILLJACK_CLUSTER_NAME"}, Default: DefaultClusterName, Table: TableServe,
			Doc:   "the cluster's namespace in NATS (letters, digits, `-`, `_`): every bucket and stream name is derived from it, so two deployments can share one NATS",
			Usage: "the cluster's namespace in NATS", Refuse: true,
			parse: clusterNameParser{}, set: to(func(s *Settings) *string { return &s.Cluster.Name })},
		{Flag: "--cluster-creds", Arg: "FILE", Env: []string{"SKILLJACK_CLUSTER_CREDS"}, DefaultDoc: "none", Table: TableServe,
			Doc:   "NATS credentials file (JWT and NKey seed)",
			Usage: "NATS credentials file",
			parse: textParser{trim: true}, set: to(func(s *Settings) *string { return &s.Cluster.Creds })},
		{Flag: "--cluster-token", Arg: "TOKEN", Env: []string{"SKILLJACK_CLUSTER_TOKEN"}, DefaultDoc: "none", Table: TableServe, Secret: true,
			Doc:   "NATS authentication token; never logged",
			Usage: "NATS authentication token",
			parse: textParser{trim: true}, set: to(func(s *Settings) *string { return &s.Cluster.Token })},
		{Flag: "--cluster-tls-ca", Arg: "FILE", Env: []string{"SKILLJACK_CLUSTER_TLS_CA"}, DefaultDoc: "system roots", Table: TableServe,
			Doc:   "PEM file of the CA that signs the NATS server's certificate",
			Usage: "CA of the NATS server's certificate",
			parse: textParser{trim: true}, set: to(func(s *Settings) *string { return &s.Cluster.TLSCA })},
		{Flag: "--cluster-tls-cert", Arg: "FILE", Env: []string{"SKILLJACK_CLUSTER_TLS_CERT"}, DefaultDoc: "none", Table: TableServe,
			Doc:   "PEM client certificate for NATS (mutual TLS; with `--cluster-tls-key`)",
			Usage: "client certificate for NATS",
			parse: textParser{trim: true}, set: to(func(s *Settings) *string { return &s.Cluster.TLSCert })},
		{Flag: "--cluster-tls-key", Arg: "FILE", Env: []string{"SKILLJACK_CLUSTER_TLS_KEY"}, DefaultDoc: "none", Table: TableServe,
			Doc:   "PEM key of `--cluster-tls-cert`",
			Usage: "key of the client certificate for NATS",
			parse: textParser{trim: true}, set: to(func(s *Settings) *string { return &s.Cluster.TLSKey })},
		{Flag: "--cluster-lease", Arg: "DURATION", Env: []string{"SKILLJACK_CLUSTER_LEASE"}, Default: DefaultClusterLease.String(), DefaultDoc: "`15s`", Table: TableServe,
			Doc:   "the leader lease (a Go duration, at least `300ms`), renewed every third of it: a leader that crashed is replaced within about this long",
			Usage: "leader lease, renewed every third of it", Refuse: true,
			parse: durationParser{min: MinClusterLease}, set: to(func(s *Settings) *time.Duration { return &s.Cluster.Lease })},
	}
}

// clusterNamePattern is what a NATS stream, bucket and subject token may
// hold safely.
var clusterNamePattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// clusterNameParser reads a cluster name.
type clusterNameParser struct{}

func (clusterNameParser) empty(r raw) bool { return strings.TrimSpace(r.text) == "" }

func (clusterNameParser) parse(r raw) (any, string) {
	v := strings.TrimSpace(r.text)
	if !clusterNamePattern.MatchString(v) {
		return nil, "is not a cluster name (1 to 64 letters, digits, '-' or '_')"
	}
	return v, ""
}

// natsSchemes are the URL schemes nats.go connects with.
var natsSchemes = map[string]bool{"nats": true, "tls": true, "ws": true, "wss": true}

// clusterURLParser reads the comma-separated NATS server URLs of
// --cluster: each must be scheme://host[:port] with a NATS scheme (nats,
// tls, ws, wss) and a port of 1 to 65535, since nats.go would otherwise
// take a typo for a host name and retry it for ever.
type clusterURLParser struct{}

func (clusterURLParser) empty(r raw) bool { return strings.TrimSpace(r.text) == "" }

func (clusterURLParser) parse(r raw) (any, string) {
	var urls []string
	for part := range strings.SplitSeq(r.text, ",") {
		part = strings.TrimSpace(part)
		if why := natsURLProblem(part); why != "" {
			return nil, why
		}
		urls = append(urls, part)
	}
	return strings.Join(urls, ","), ""
}

// natsURLProblem says what is wrong with one NATS server URL; "" when
// nothing is.
func natsURLProblem(s string) string {
	if s == "" {
		return "has an empty URL in its comma list"
	}
	u, err := url.Parse(s)
	switch {
	case err != nil || u.Host == "" || u.Hostname() == "":
		return fmt.Sprintf("is not a NATS URL: %q (want nats://host:4222)", redactURL(s))
	case !natsSchemes[u.Scheme]:
		return fmt.Sprintf("has the scheme %q in %q: NATS URLs start with nats://, tls://, ws:// or wss://", u.Scheme, redactURL(s))
	case u.Port() != "":
		if n, err := strconv.Atoi(u.Port()); err != nil || n < 1 || n > 65535 {
			return fmt.Sprintf("has the port %q in %q: want 1 to 65535", u.Port(), redactURL(s))
		}
	}
	return ""
}

// redactURL hides the user part of a URL (a NATS token or password).
func redactURL(s string) string {
	at := strings.LastIndex(s, "@")
	if at < 0 {
		return s
	}
	if scheme, _, ok := strings.Cut(s[:at], "://"); ok {
		return scheme + "://…@" + s[at+1:]
	}
	return "…@" + s[at+1:]
}

// durationParser reads a Go duration ("15s", "1500ms") of at least min.
type durationParser struct{ min time.Duration }

func (durationParser) empty(r raw) bool { return strings.TrimSpace(r.text) == "" }

func (p durationParser) parse(r raw) (any, string) {
	d, err := time.ParseDuration(strings.TrimSpace(r.text))
	if err != nil {
		return nil, "is not a duration (15s, 1500ms)"
	}
	if d < p.min {
		return nil, fmt.Sprintf("is below the minimum of %s", p.min)
	}
	return d, ""
}
