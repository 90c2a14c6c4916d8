package server

import (
	"net/http"

	"storefront/internal/platform/metrics"
)

// countNotifications counts provider notifications by the answer they got.
// The payments handler says everything through its status code, so the
// outcome is read from there rather than from a hook inside payments.
func countNotifications(m *metrics.Metrics, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(rec, r)
		m.Payments.WithLabelValues(notifyOutcome(rec.status)).Inc()
	})
}

func notifyOutcome(status int) string {
	switch status {
	case http.StatusOK:
		return "success"
	case http.StatusBadRequest:
		return "refused"
	case http.StatusUnauthorized:
		return "bad_signature"
	case http.StatusRequestEntityTooLarge:
		return "too_large"
	case http.StatusServiceUnavailable:
		return "unavailable"
	default:
		return "error"
	}
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
