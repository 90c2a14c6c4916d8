package payments

import (
	"errors"
	"io"
	"log/slog"
	"net/http"

	"storefront/store"
)

// NotifyHandler serves POST /payments/{provider}/notify. Providers only
// understand "success" and "fail": the reason for a refusal goes to the log.
func (s *Service) NotifyHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		provider := r.PathValue("provider")
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBody))
		if err != nil {
			var tooBig *http.MaxBytesError
			status := http.StatusBadRequest
			if errors.As(err, &tooBig) {
				status = http.StatusRequestEntityTooLarge
			}
			slog.WarnContext(r.Context(), "payment notification refused", "provider", provider, "reason", err.Error())
			reply(w, status, "fail")
			return
		}
		outcome, err := s.Notify(r.Context(), provider, body, r.Header.Get("X-Signature"))
		if err != nil {
			status := http.StatusBadRequest
			switch {
			case errors.Is(err, ErrBadSignature):
				status = http.StatusUnauthorized
			case errors.Is(err, store.ErrUnavailable):
				status = http.StatusServiceUnavailable // the provider will retry
			case !isRefusal(err):
				status = http.StatusInternalServerError
			}
			slog.WarnContext(r.Context(), "payment notification refused", "provider", provider, "status", status, "reason", err.Error())
			reply(w, status, "fail")
			return
		}
		slog.InfoContext(r.Context(), "payment notification", "provider", provider, "outcome", string(outcome))
		reply(w, http.StatusOK, "success")
	})
}

func isRefusal(err error) bool {
	for _, e := range []error{ErrUnknownProvider, ErrBadSignature, ErrMalformed, ErrStale, ErrMerchant, ErrOrderNotFound, ErrCurrency, ErrAmount, ErrOtherOrder} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

func reply(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}
