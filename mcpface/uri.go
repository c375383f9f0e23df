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
//
// A URI already in that form (every byte of every segment one that
// [events.EncodePath] keeps, no empty, . or .. segment: the URIs a client
// copies from a listing) is returned as it is, with no allocation.
func canonicalURI(uri string) (string, error) {
	rest, ok := strings.CutPrefix(uri, events.URIScheme)
	if !ok {
		return "", errNotSkillURI
	}
	if plainURI(rest) {
		return uri, nil
	}
	return recodeURI(rest)
}

// plainURI reports whether rest, a skill:// URI after its scheme, is
// already canonical: only bytes [events.EncodePath] keeps and '/', and no
// segment empty, "." or "..".
func plainURI(rest string) bool {
	start := 0
	for i := 0; i <= len(rest); i++ {
		if i < len(rest) && rest[i] != '/' {
			if !unreservedByte(rest[i]) {
				return false
			}
			continue
		}
		if seg := rest[start:i]; seg == "" || seg == "." || seg == ".." {
			return false
		}
		start = i + 1
	}
	return true
}

// recodeURI is [canonicalURI] of the skill:// URI whose part after the
// scheme is rest, segment by segment.
func recodeURI(rest string) (string, error) {
	var b strings.Builder
	b.Grow(len(events.URIScheme) + len(rest) + len(rest)/2)
	// One pass over the segments into one builder: time and memory stay
	// linear in the URI, with no slice of segments.
	b.WriteString(events.URIScheme)
	for i := 0; ; i++ {
		seg, tail, more := strings.Cut(rest, "/")
		if i > 0 {
			b.WriteByte('/')
		}
		if err := appendSegment(&b, seg); err != nil {
			return "", err
		}
		if !more {
			break
		}
		rest = tail
	}
	return b.String(), nil
}

// appendSegment writes the canonical form of one URI segment to b: decoded,
// then encoded as [events.EncodePath] encodes a segment, with a decoded '/'
// kept as %2F.
func appendSegment(b *strings.Builder, seg string) error {
	dec := seg
	if strings.IndexByte(seg, '%') >= 0 {
		d, err := url.PathUnescape(seg)
		if err != nil {
			return errBadEscape
		}
		dec = d
	}
	if dec == "" || dec == "." || dec == ".." {
		return errBadSegment
	}
	for j := 0; ; j++ {
		part, tail, more := strings.Cut(dec, "/")
		if j > 0 {
			b.WriteString("%2F")
		}
		// part holds no '/', so EncodePath encodes it as one segment.
		b.WriteString(events.EncodePath(part))
		if !more {
			return nil
		}
		dec = tail
	}
}

// lookupURI returns the canonical form of uri for a manifest lookup, or the
// -32602 answer when uri cannot name a served file: notFound for a URI that
// simply matches nothing, a message about the escape for a malformed one.
// Both name uri as the client wrote it, cut by [clip]; notFound must quote
// it through clip too.
func lookupURI(uri, notFound string) (string, error) {
	c, err := canonicalURI(uri)
	switch {
	case errors.Is(err, errBadEscape):
		return "", invalidParams("Invalid resource URI "+clip(uri)+": "+err.Error(), uri)
	case err != nil:
		return "", invalidParams(notFound, uri)
	}
	return c, nil
}
