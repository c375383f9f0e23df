package mcpface

// SetPanicHook installs fn to run at the top of every request, so tests can
// make a handler path panic.
func SetPanicHook(f *Facade, fn func(method string)) { f.panicHook = fn }
