//go:build !linux

package remotetest

import (
	"errors"
	"time"
)

// lchtimes is not available here: tests that age a link skip.
func lchtimes(string, time.Time) error { return errors.ErrUnsupported }
