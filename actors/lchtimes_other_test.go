//go:build !linux

package actors_test

import (
	"errors"
	"time"
)

// lchtimes is not available here: tests that age a link skip.
func lchtimes(string, time.Time) error { return errors.ErrUnsupported }
