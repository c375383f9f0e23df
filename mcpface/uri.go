package mcpface

import (
	"errors"
	"net/url"
	"strings"

	"github.com/skilljack/skilljack-mcp/events"
)

// Errors of [canonicalURI]; callers turn both into -32602 naming the URI as
// the client wrote it.
var (
	errBadEscape   = errors.New("malformed percent-escape")
	errBadSegment  = errors.New("empty, . or .. path segment")
	errNotSkillURI = errors.New("not a skill:// URI")
)

// canonicalURI returns the form in which the manifest holds the skill:// URI
// uri: after "skill://", each '/'-separated segment is percent-decoded and
// encoded again as [events.EncodePath] encodes a segment, so that
// skill://s/uni-%c3%b1ame/SKILL.md and skill://s/%67ood/x name the files
// listed as skill://s/uni-%C3%B1ame/SKILL.md and skill://s/good/x. A '/'
// decoded inside a segment stays %2F, so it never splits a segment. A segment
// that is empty or decodes to "." or ".." is refused (errBadSegment): a URI
// is looked up, never resolved against a path, so it can only fail to match
// (BR-21). A URI without the skill:// scheme returns errNotSkillURI.
func canonicalURI(uri string) (string, error) {
	rest, ok := strings.CutPrefix(uri, events.URIScheme)
	if !ok {
		return "", errNotSkillURI
	}
	segs := strings.Split(rest, "/")
	for i, seg := range segs {
		dec, err := url.PathUnescape(seg)
		if err != nil {
			return "", errBadEscape
		}
		if dec == "" || dec == "." || dec == ".." {
			return "", errBadSegment
		}
		parts := strings.Split(dec, "/")
		for j, p := range parts {
			// p holds no '/', so EncodePath encodes it as one segment.
			parts[j] = events.EncodePath(p)
		}
		segs[i] = strings.Join(parts, "%2F")
	}
	return events.URIScheme + strings.Join(segs, "/"), nil
}

// lookupURI returns the canonical form of uri for a manifest lookup, or the
// -32602 answer when uri cannot name a served file: notFound for a URI that
// simply matches nothing, a message about the escape for a malformed one.
// Both name uri as the client wrote it.
func lookupURI(uri, notFound string) (string, error) {
	c, err := canonicalURI(uri)
	switch {
	case errors.Is(err, errBadEscape):
		return "", invalidParams("Invalid resource URI "+uri+": "+err.Error(), uri)
	case err != nil:
		return "", invalidParams(notFound, uri)
	}
	return c, nil
}
