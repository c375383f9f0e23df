package mcpface

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// pendingWait bounds how long a request waits for the hashing a pending
// catalog ([events.Catalog.Pending]) still needs: the first start of a
// large tree hashes its supporting files after the first initialize
// (issue 12), about a second per 10,000 skills on two cores.
const pendingWait = 2 * time.Minute

// pendingOK are the methods answered from a pending catalog: they show
// names and descriptions only, never a digest or a file. Every other
// method (notifications aside) waits for a complete catalog
// ([Facade.awaitComplete]), so a pending digest never reaches a client.
var pendingOK = map[string]bool{
	"initialize":               true,
	"server/discover":          true,
	"ping":                     true,
	"tools/list":               true,
	"prompts/list":             true,
	"resources/templates/list": true,
	"logging/setLevel":         true,
	"resources/subscribe":      true,
	"resources/unsubscribe":    true,
	"subscriptions/listen":     true,
}

// waitsForDigests reports whether a request for method must wait while the
// catalog served is pending.
func waitsForDigests(method string) bool {
	return !pendingOK[method] && !strings.HasPrefix(method, "notifications/")
}

// awaitComplete returns once the catalog served is not pending (or there
// is none), or an error when ctx is done or pendingWait passed first.
func (f *Facade) awaitComplete(ctx context.Context) error {
	timer := time.NewTimer(pendingWait)
	defer timer.Stop()
	for {
		f.swapMu.Lock()
		ch := f.swapped
		f.swapMu.Unlock()
		if s := f.current(); s == nil || !s.cat.Pending {
			return nil
		}
		if ch == nil { // the first swap is being published
			ch = make(chan struct{})
			close(ch)
			time.Sleep(time.Millisecond)
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		case <-timer.C:
			return &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
				Message: fmt.Sprintf("Server starting: the skills' files are still being hashed after %v; retry shortly", pendingWait)}
		}
	}
}
