package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"

	"storefront/internal/payments"
	"storefront/internal/platform/store"
	"storefront/internal/vocab/errs"
)

// The webhook's statuses, from the refusal's category (docs/payments.md):
// what the provider sees of each reason payments gives.
func TestNotifyStatus(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want int
	}{
		{payments.ErrBadSignature, http.StatusUnauthorized},
		{fmt.Errorf("%w: %q", payments.ErrUnknownProvider, "nope"), http.StatusBadRequest},
		{fmt.Errorf("%w: eventId", payments.ErrMalformed), http.StatusBadRequest},
		{fmt.Errorf("%w: 6m0s off", payments.ErrStale), http.StatusBadRequest},
		{fmt.Errorf("%w: %q", payments.ErrMerchant, "m-9"), http.StatusBadRequest},
		{fmt.Errorf("%w: %q", payments.ErrOrderNotFound, "T1"), http.StatusBadRequest},
		{fmt.Errorf("%w: USD", payments.ErrCurrency), http.StatusBadRequest},
		{fmt.Errorf("%w: 1.00", payments.ErrAmount), http.StatusBadRequest},
		{fmt.Errorf("%w: mock/p-1, not order T2's", payments.ErrOtherOrder), http.StatusBadRequest},
		{errors.Join(store.ErrUnavailable, errors.New("connection refused")), http.StatusServiceUnavailable},
		{fmt.Errorf("%w: %w", store.ErrCommitUnknown, context.DeadlineExceeded), http.StatusServiceUnavailable},
		{fmt.Errorf("%w: the provider's API", errs.Unavailable), http.StatusServiceUnavailable},
		{fmt.Errorf("claiming the payment: %w", &pgconn.PgError{Severity: "FATAL", Code: "53300", Message: "sorry, too many clients already"}), http.StatusServiceUnavailable},
		{fmt.Errorf("claiming the payment: %w", &mysql.MySQLError{Number: 1040, Message: "Too many connections"}), http.StatusServiceUnavailable},
		{errors.New("writing OrderPaid event: disk full"), http.StatusInternalServerError},
	} {
		if got := notifyStatus(tc.err); got != tc.want {
			t.Errorf("notifyStatus(%q) = %d, want %d", tc.err, got, tc.want)
		}
	}
}

type notifier struct {
	outcome payments.Outcome
	err     error
	body    string
}

func (n *notifier) Notify(_ context.Context, provider string, header http.Header, body []byte) (payments.Outcome, error) {
	n.body = provider + " " + string(body) + " " + header.Get("X-Signature")
	return n.outcome, n.err
}

// Reply words the answer as the mock provider does.
func (n *notifier) Reply(_ string, err error) (string, []byte) {
	if err != nil {
		return "text/plain", []byte("fail")
	}
	return "text/plain", []byte("success")
}

func TestNotifyHandler(t *testing.T) {
	for _, tc := range []struct {
		name   string
		n      *notifier
		body   string
		status int
		answer string
		called string
	}{
		{"applied", &notifier{outcome: payments.OutcomeApplied}, `{"a":1}`, 200, "success", `mock {"a":1} sha256=ab`},
		{"duplicate", &notifier{outcome: payments.OutcomeDuplicate}, `{}`, 200, "success", `mock {} sha256=ab`},
		{"refused", &notifier{err: payments.ErrBadSignature}, `{}`, 401, "fail", `mock {} sha256=ab`},
		{"too large", &notifier{}, strings.Repeat("x", 65), 413, "fail", ""},
	} {
		mux := http.NewServeMux()
		mux.Handle("POST /payments/{provider}/notify", NotifyHandler(tc.n, 64))
		req := httptest.NewRequest("POST", "/payments/mock/notify", strings.NewReader(tc.body))
		req.Header.Set("X-Signature", "sha256=ab")
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		if rec.Code != tc.status || rec.Body.String() != tc.answer || tc.n.body != tc.called {
			t.Errorf("%s: %d %q, Notify(%q); want %d %q, Notify(%q)", tc.name, rec.Code, rec.Body, tc.n.body, tc.status, tc.answer, tc.called)
		}
	}
}
