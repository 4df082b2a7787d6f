package stage

import (
	"net/http"
	"net/http/pprof"
)

// servePprof adds the runtime profiles to the ops mux (--pprof): a CPU
// profile of a process at rest shows what it burns without the guesswork.
func servePprof(mux *http.ServeMux) {
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
}
