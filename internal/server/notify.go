package server

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"

	"storefront/internal/payments"
	"storefront/internal/platform/store"
	"storefront/internal/vocab/errs"
)

// Notifier applies one provider notification and words the answer the
// provider expects: *payments.Service.
type Notifier interface {
	Notify(ctx context.Context, provider string, header http.Header, body []byte) (payments.Outcome, error)
	Reply(provider string, err error) (contentType string, body []byte)
}

// NotifyHandler serves POST /payments/{provider}/notify and the providers'
// own paths (Options.PaymentNotify, PaymentRoutes) with n, reading at
// most maxBody bytes (payments.Config.MaxBody). It is the notifications'
// presenter, as resolvers.PresentError is GraphQL's: the provider is told
// in its own words (n.Reply: WeChat Pay's {"code":"FAIL"}, Alipay's
// success, …) and the reason for a refusal goes to the log. The status
// follows the error's category:
//
//	errs.Unauthenticated                             401: a bad signature
//	errs.Unavailable, store.ErrUnavailable           503: the provider will retry
//	errs.InvalidInput, errs.NotFound, errs.Conflict  400: refused (provider, shape, timestamp, merchant, order, currency, amount, payment id)
//	anything else                                    500
//	a body over maxBody                              413
func NotifyHandler(n Notifier, maxBody int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		provider := r.PathValue("provider")
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
		if err != nil {
			var tooBig *http.MaxBytesError
			status := http.StatusBadRequest
			if errors.As(err, &tooBig) {
				status = http.StatusRequestEntityTooLarge
			}
			slog.WarnContext(r.Context(), "payment notification refused", "provider", provider, "reason", err.Error())
			reply(w, n, provider, status, err)
			return
		}
		outcome, err := n.Notify(r.Context(), provider, r.Header, body)
		if err != nil {
			status := notifyStatus(err)
			slog.WarnContext(r.Context(), "payment notification refused", "provider", provider, "status", status, "reason", err.Error())
			reply(w, n, provider, status, err)
			return
		}
		slog.InfoContext(r.Context(), "payment notification", "provider", provider, "outcome", string(outcome))
		reply(w, n, provider, http.StatusOK, nil)
	})
}

// ForProvider serves h as provider's own route (a fixed path such as
// Stripe's /payments/stripe/webhook).
func ForProvider(provider string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.SetPathValue("provider", provider)
		h.ServeHTTP(w, r)
	})
}

// notifyStatus is the HTTP status of a notification that failed with err.
func notifyStatus(err error) int {
	switch {
	case errors.Is(err, errs.Unauthenticated):
		return http.StatusUnauthorized
	case errors.Is(err, errs.Unavailable), errors.Is(store.Classify(err), store.ErrUnavailable):
		// Classified here too, as resolvers.PresentError does: a server
		// out of connections (53300, 1040) reaches here as the driver's
		// error, and the provider must send it again.
		return http.StatusServiceUnavailable
	case errors.Is(err, errs.InvalidInput), errors.Is(err, errs.NotFound), errors.Is(err, errs.Conflict):
		return http.StatusBadRequest
	default:
		return http.StatusInternalServerError
	}
}

func reply(w http.ResponseWriter, n Notifier, provider string, status int, err error) {
	ctype, body := n.Reply(provider, err)
	w.Header().Set("Content-Type", ctype)
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
