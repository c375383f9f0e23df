// Package test holds the end-to-end tests of skilljack-mcp: the built binary
// over stdio with go-sdk's client on both protocol eras, the messy-input
// cases of shared/cases, trace replay, and the benchmarks of the assembled
// pipeline. Its testdata/ keeps copies of every input a test needs, so the
// tests run without ../shared; the corpus tests skip when it is absent.
package test
