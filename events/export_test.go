package events

// RefHeld reports whether the by-reference payload names a value the
// process-local store still holds.
func RefHeld(payload []byte) bool {
	_, err := decodeRef(payload)
	return err == nil
}
