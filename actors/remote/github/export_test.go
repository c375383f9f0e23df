package github

// Lchtimes sets the modification time of a link itself (tests age crash
// leftovers that are links); errors.ErrUnsupported where it cannot.
var Lchtimes = lchtimes
