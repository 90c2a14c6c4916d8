package paystub

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v82/webhook"

	"storefront/internal/payments/stripe"
)

// Stripe plays Stripe's PaymentIntents and Refunds, with Idempotency-Key
// replays, and signs webhook events with the endpoint's secret.
type Stripe struct {
	Knobs
	*httptest.Server
	SecretKey, WebhookSecret string

	mu      sync.Mutex
	intents map[string]map[string]any // by id
	byKey   map[string][]byte         // Idempotency-Key → the first answer
	params  map[string]string         // Idempotency-Key → the first request's form
	Created []url.Values              // every PaymentIntent create's form
}

// NewStripe starts a Stripe stand-in.
func NewStripe(t testing.TB) *Stripe {
	s := &Stripe{SecretKey: "sk_test_51Hstandin", WebhookSecret: "whsec_standin0123456789",
		intents: map[string]map[string]any{}, byKey: map[string][]byte{}, params: map[string]string{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/payment_intents", s.create)
	mux.HandleFunc("GET /v1/payment_intents/{id}", s.get)
	mux.HandleFunc("POST /v1/payment_intents/{id}/cancel", s.cancel)
	mux.HandleFunc("POST /v1/refunds", s.refund)
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// Config is the shop's configuration for this stand-in.
func (s *Stripe) Config(currency string) stripe.Config {
	return stripe.Config{SecretKey: s.SecretKey, WebhookSecret: s.WebhookSecret, BaseURL: s.URL, Currency: currency}
}

func (s *Stripe) fail(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"type": "invalid_request_error", "code": code, "message": msg}})
}

// read checks the secret key and the form; a POST must carry an
// Idempotency-Key.
func (s *Stripe) read(w http.ResponseWriter, r *http.Request) (url.Values, bool) {
	if r.Header.Get("Authorization") != "Bearer "+s.SecretKey {
		s.problem("Authorization " + r.Header.Get("Authorization"))
		s.fail(w, http.StatusUnauthorized, "", "Invalid API Key provided")
		return nil, false
	}
	body, _ := io.ReadAll(r.Body)
	v, err := url.ParseQuery(string(body))
	if err != nil {
		s.problem("form: " + err.Error())
	}
	if r.Method == http.MethodPost && r.Header.Get("Idempotency-Key") == "" {
		s.problem("POST " + r.URL.Path + " without Idempotency-Key")
	}
	return v, true
}

// replay answers a repeated Idempotency-Key with the first answer, and
// refuses one sent again with other parameters, as Stripe does.
func (s *Stripe) replay(w http.ResponseWriter, r *http.Request, v url.Values) bool {
	k := r.Header.Get("Idempotency-Key")
	s.mu.Lock()
	b, ok := s.byKey[k]
	first, seen := s.params[k]
	if !seen && k != "" {
		s.params[k] = v.Encode()
	}
	s.mu.Unlock()
	if seen && first != v.Encode() {
		s.problem("Idempotency-Key " + k + " sent again with other parameters")
		s.fail(w, http.StatusBadRequest, "idempotency_error", "Keys for idempotent requests can only be used with the same parameters they were first used with.")
		return true
	}
	if ok {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Idempotent-Replayed", "true")
		_, _ = w.Write(b)
	}
	return ok
}

func (s *Stripe) answer(w http.ResponseWriter, r *http.Request, v any) {
	b, _ := json.Marshal(v)
	if k := r.Header.Get("Idempotency-Key"); k != "" && r.Method == http.MethodPost {
		s.mu.Lock()
		s.byKey[k] = b
		s.mu.Unlock()
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

func (s *Stripe) create(w http.ResponseWriter, r *http.Request) {
	v, ok := s.read(w, r)
	if !ok || s.replay(w, r, v) {
		return
	}
	amount, err := strconv.ParseInt(v.Get("amount"), 10, 64)
	if err != nil || amount <= 0 || len(v.Get("currency")) != 3 || v.Get("metadata[orderSn]") == "" {
		s.problem(fmt.Sprintf("PaymentIntent create: %v", v))
		s.fail(w, http.StatusBadRequest, "parameter_missing", "amount, currency")
		return
	}
	s.mu.Lock()
	id := fmt.Sprintf("pi_3Standin%06d", len(s.intents)+1)
	pi := map[string]any{"id": id, "object": "payment_intent", "amount": amount, "currency": v.Get("currency"),
		"status": "requires_payment_method", "client_secret": id + "_secret_standin", "livemode": false,
		"metadata": map[string]string{"orderSn": v.Get("metadata[orderSn]")}}
	s.intents[id] = pi
	s.Created = append(s.Created, v)
	s.mu.Unlock()
	s.answer(w, r, pi)
}

// Intent is the PaymentIntent made for order sn ("" when none).
func (s *Stripe) Intent(sn string) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, pi := range s.intents {
		if pi["metadata"].(map[string]string)["orderSn"] == sn {
			return pi
		}
	}
	return nil
}

// Succeed makes the order's PaymentIntent succeeded (making one when the
// shop did not) and returns it.
func (s *Stripe) Succeed(sn string, amount int64, currency string) map[string]any {
	pi := s.Intent(sn)
	s.mu.Lock()
	defer s.mu.Unlock()
	if pi == nil {
		id := fmt.Sprintf("pi_3Standin%06d", len(s.intents)+1)
		pi = map[string]any{"id": id, "object": "payment_intent", "amount": amount, "currency": currency, "metadata": map[string]string{"orderSn": sn}}
		s.intents[id] = pi
	}
	pi["status"] = "succeeded"
	return pi
}

func (s *Stripe) get(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.read(w, r); !ok {
		return
	}
	s.mu.Lock()
	pi := s.intents[r.PathValue("id")]
	s.mu.Unlock()
	if pi == nil {
		s.fail(w, http.StatusNotFound, "resource_missing", "No such payment_intent")
		return
	}
	s.answer(w, r, pi)
}

func (s *Stripe) cancel(w http.ResponseWriter, r *http.Request) {
	v, ok := s.read(w, r)
	if !ok || s.replay(w, r, v) {
		return
	}
	s.mu.Lock()
	pi := s.intents[r.PathValue("id")]
	if pi != nil && pi["status"] != "succeeded" {
		pi["status"] = "canceled"
	}
	s.mu.Unlock()
	if pi == nil || pi["status"] == "succeeded" {
		s.fail(w, http.StatusBadRequest, "payment_intent_unexpected_state", "cannot cancel")
		return
	}
	s.answer(w, r, pi)
}

func (s *Stripe) refund(w http.ResponseWriter, r *http.Request) {
	v, ok := s.read(w, r)
	if !ok {
		return
	}
	no := v.Get("metadata[refundNo]")
	if no == "" || no != r.Header.Get("Idempotency-Key") || v.Get("payment_intent") == "" || v.Get("amount") == "" {
		s.problem(fmt.Sprintf("refund: %v, Idempotency-Key %q", v, r.Header.Get("Idempotency-Key")))
	}
	drop, refuse, settle := s.Knobs.refund(no)
	if drop {
		hangUp(w)
		return
	}
	if s.replay(w, r, v) {
		return
	}
	if refuse {
		s.fail(w, http.StatusBadRequest, "charge_already_refunded", "Charge has already been refunded.")
		return
	}
	amount, _ := strconv.ParseInt(v.Get("amount"), 10, 64)
	status := "pending"
	if settle {
		status = "succeeded"
	}
	s.mu.Lock()
	id := fmt.Sprintf("re_3Standin%06d", len(s.byKey)+1)
	s.mu.Unlock()
	s.answer(w, r, RefundObject(id, v.Get("payment_intent"), no, amount, "cny", status))
}

// RefundObject is a Refund as Stripe describes it.
func RefundObject(id, paymentIntent, refundNo string, amount int64, currency, status string) map[string]any {
	return map[string]any{"id": id, "object": "refund", "amount": amount, "currency": currency, "status": status,
		"payment_intent": paymentIntent, "metadata": map[string]string{"refundNo": refundNo}}
}

// Event is a webhook event of type typ about object, signed at t (zero:
// now) with secret ("": the endpoint's).
func (s *Stripe) Event(id, typ string, object map[string]any, account, secret string, t time.Time) (http.Header, []byte) {
	e := map[string]any{"id": id, "object": "event", "type": typ, "api_version": "2025-08-27.basil", "created": time.Now().Unix(),
		"livemode": false, "data": map[string]any{"object": object}}
	if account != "" {
		e["account"] = account
	}
	body, _ := json.Marshal(e)
	if secret == "" {
		secret = s.WebhookSecret
	}
	sp := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: body, Secret: secret, Timestamp: t})
	return http.Header{"Stripe-Signature": {sp.Header}, "Content-Type": {"application/json"}}, body
}
