package mcpface

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"sort"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skilljack/skilljack-mcp/events"
)

// invalidParams returns a -32602 error whose data names uri, cut as [clip]
// cuts it; msg must quote uri through clip too.
func invalidParams(msg, uri string) error {
	return uriError(jsonrpc.CodeInvalidParams, msg, uri)
}

func internalError(msg, uri string) error {
	return uriError(jsonrpc.CodeInternalError, msg, uri)
}

func uriError(code int64, msg, uri string) error {
	e := &jsonrpc.Error{Code: code, Message: msg}
	if uri != "" {
		e.Data, _ = json.Marshal(map[string]string{"uri": clip(uri)})
	}
	return e
}

// listResources answers resources/list from the snapshot, in URI order, with
// a cursor naming the last URI returned so that a catalog change between
// pages neither skips nor repeats a resource.
func (f *Facade) listResources(req *mcp.ListResourcesRequest) (*mcp.ListResourcesResult, error) {
	s := f.current()
	var cursor string
	if req.Params != nil {
		cursor = req.Params.Cursor
	}
	list := s.resources()
	start, err := afterCursor(cursor, len(list), func(i int) string { return s.uri(list[i]) })
	if err != nil {
		return nil, err
	}
	end := min(start+resourcesPageSize, len(list))
	res := &mcp.ListResourcesResult{
		Resources: s.resourcesOf(list[start:end]),
		Cacheable: mcp.Cacheable{TTLMs: 0, CacheScope: "private"},
	}
	if end < len(list) {
		res.NextCursor = encodeCursor(s.uri(list[end-1]))
	}
	return res, nil
}

type cursorJSON struct {
	After *string `json:"after"`
}

// encodeCursor returns base64(JSON {"after": uri}), the reference's cursor.
func encodeCursor(uri string) string {
	b, _ := json.Marshal(cursorJSON{After: &uri})
	return base64.StdEncoding.EncodeToString(b)
}

// afterCursor returns the index of the first of n sorted keys greater than
// the cursor's "after" key, 0 for an empty cursor, and -32602 for a malformed
// one (BASE-R30).
func afterCursor(cursor string, n int, key func(int) string) (int, error) {
	if cursor == "" {
		return 0, nil
	}
	raw, err := base64.StdEncoding.DecodeString(cursor)
	var c cursorJSON
	if err == nil {
		err = json.Unmarshal(raw, &c)
	}
	if err != nil || c.After == nil {
		return 0, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Invalid cursor"}
	}
	return sort.Search(n, func(i int) bool { return key(i) > *c.After }), nil
}

// readResultKey carries the result the receiving middleware already
// computed for a resources/read request down to [Facade.readResourceHandler].
type readResultKey struct{}

// readResourceHandler is registered with the SDK for the template and the
// index. The receiving middleware resolves every resources/read first (so an
// unserved URI gets -32602 and never reaches the SDK's lookup) and passes its
// result down in the context; the SDK's own read path then adds what the
// protocol era needs (resultType on 2026-07-28, BASE-R03).
func (f *Facade) readResourceHandler(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	if res, ok := ctx.Value(readResultKey{}).(*mcp.ReadResourceResult); ok {
		return res, nil
	}
	return f.readResource(req.Params.URI)
}

// readResource looks uri up in the snapshot, after [canonicalURI], and
// returns its current bytes under the canonical URI: -32602 when the URI is
// not served (never a path join, BR-21), -32603 when the bytes cannot be
// served as advertised. Errors name uri as the client wrote it. A file,
// SKILL.md included ([Facade.currentSkillMD]), that changed on disk since
// the snapshot was built is read from the next one ([Facade.readCurrent]),
// so a read during a rescan gets the new bytes.
func (f *Facade) readResource(requested string) (*mcp.ReadResourceResult, error) {
	return f.resolveRead(f.current(), requested, true)
}

// resolveRead is [Facade.readResource] against snapshot s. With wait false
// it never waits for a newer snapshot: where readResource would (a file
// changed on disk since s was built), it returns errWouldWait instead. The
// SDK's path and the stdio fast lane (fastlane.go) both answer with it.
func (f *Facade) resolveRead(s *snapshot, requested string, wait bool) (*mcp.ReadResourceResult, error) {
	uri, err := lookupURI(requested, "Resource not found: "+clip(requested))
	if err != nil {
		return nil, err
	}
	res := &mcp.ReadResourceResult{Cacheable: mcp.Cacheable{TTLMs: 0, CacheScope: "private"}}
	if uri == events.IndexURI {
		res.Contents = []*mcp.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(s.indexJSON())}}
		return res, nil
	}
	ref, ok := s.cat.File(uri)
	if !ok {
		return nil, invalidParams("Resource not found: "+clip(requested), requested)
	}
	max := f.opts.MaxFileSize
	var data []byte
	file := ref.File
	if ref.File.Path == "SKILL.md" {
		data, err = f.currentSkillMDOf(s, ref.Skill, wait)
	} else {
		data, file, err = f.readCurrentOf(s, ref.Skill, ref.File, max, wait)
	}
	switch {
	case errors.Is(err, errWouldWait):
		return nil, err
	case errors.Is(err, errTooLarge):
		return nil, internalError(fmt.Sprintf("File too large: %s (limit %s): %s", megabytes(ref.File.Size), megabytes(max), clip(requested)), requested)
	case errors.Is(err, errChanged):
		return nil, internalError(fmt.Sprintf("%s %s", clip(requested), errChanged), requested)
	case errors.Is(err, fs.ErrNotExist):
		return nil, invalidParams("Resource not found: "+clip(requested), requested)
	case err != nil:
		return nil, internalError(fmt.Sprintf("reading %s: %v", clip(requested), err), requested)
	}
	c := &mcp.ResourceContents{URI: uri, MIMEType: fileMIME(file)}
	if servedAsText(file, data) && len(data) > 0 {
		c.Text = string(data)
	} else {
		c.Blob = data
		if c.Blob == nil {
			c.Blob = []byte{}
		}
	}
	res.Contents = []*mcp.ResourceContents{c}
	return res, nil
}

type dirReadParams struct {
	mcp.ParamsBase
	URI    string `json:"uri"`
	Cursor string `json:"cursor,omitempty"`
}

type dirReadResult struct {
	mcp.ResultBase
	ResultType string          `json:"resultType,omitempty"`
	Resources  []*mcp.Resource `json:"resources"`
	NextCursor string          `json:"nextCursor,omitempty"`
}

// readDirectory answers resources/directory/read (SEP2640-R64..R68): the
// direct children of a skill root or of a folder inside a skill.
func (f *Facade) readDirectory(_ context.Context, _ *mcp.ServerSession, p *dirReadParams) (*dirReadResult, error) {
	if p == nil || p.URI == "" {
		return nil, invalidParams("params.uri is required", "")
	}
	s := f.current()
	uri, err := lookupURI(strings.TrimSuffix(p.URI, "/"), "No such directory: "+clip(p.URI))
	if err != nil {
		return nil, err
	}
	children, ok := s.dir(uri)
	if !ok {
		if s.isFile(uri) {
			return nil, invalidParams(clip(p.URI)+" is not a directory resource", p.URI)
		}
		return nil, invalidParams("No such directory: "+clip(p.URI), p.URI)
	}
	if p.Cursor != "" {
		// Every listing fits one page, so no cursor was ever issued.
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Invalid cursor"}
	}
	res := &dirReadResult{Resources: slices.Clone(children)}
	if modernMeta(p.Meta) {
		res.ResultType = "complete"
	}
	return res, nil
}
