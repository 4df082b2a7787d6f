package externaldns

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"

	edns "sigs.k8s.io/external-dns/pkg/apis/externaldns"
)

// Serve builds the provider cfg selects and serves it over ExternalDNS'
// webhook protocol on l until ctx ends: ExternalDNS' --webhook-server,
// with each call under its request's context. The applier's webhook
// provider (--provider=webhook) drives it.
func Serve(ctx context.Context, cfg *edns.Config, l net.Listener, log *slog.Logger) error {
	h, err := build(ctx, cfg, log)
	if err != nil {
		return err
	}
	s := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = s.Shutdown(sctx)
	}()
	if err := s.Serve(l); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
