package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"storefront/internal/payments/mock"
)

// notify signs and sends a provider notification to a running server, so a
// new user can complete a payment by hand (demo: the mock provider).
func notify(args []string) error {
	fs := flag.NewFlagSet("notify", flag.ContinueOnError)
	provider := fs.String("provider", "mock", "provider name")
	orderSn := fs.String("order", "", "order number (required)")
	status := fs.String("status", "SUCCESS", "SUCCESS, REFUNDED or FAILED")
	amount := fs.String("amount", "", "amount, e.g. 89.00 (required: the order's amount)")
	currency := fs.String("currency", "CNY", "currency")
	merchant := fs.String("merchant", "mock-merchant", "merchant id")
	paymentID := fs.String("payment-id", "", "provider payment id (default: derived from the order)")
	eventID := fs.String("event-id", "", "provider event id (default: a fresh one)")
	url := fs.String("url", env("NOTIFY_URL", "http://127.0.0.1:8080"), "server base URL")
	secret := fs.String("secret", env("MOCK_PAYMENT_SECRET", "mock-secret"), "provider secret (STOREFRONT_MOCK_PAYMENT_SECRET)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *orderSn == "" || *amount == "" {
		return errors.New("--order and --amount are required")
	}
	if *paymentID == "" {
		*paymentID = "pay-" + *orderSn
	}
	if *eventID == "" {
		*eventID = fmt.Sprintf("evt-%s-%d", *orderSn, time.Now().UnixNano())
	}
	body, err := json.Marshal(mock.Notification{
		EventID: *eventID, PaymentID: *paymentID, OrderSn: *orderSn, Amount: *amount, Currency: *currency,
		MerchantID: *merchant, Status: strings.ToUpper(*status), Timestamp: time.Now().Unix(),
	})
	if err != nil {
		return err
	}
	req, err := http.NewRequest("POST", strings.TrimRight(*url, "/")+"/payments/"+*provider+"/notify", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Signature", mock.Sign(*secret, body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	reply, _ := io.ReadAll(resp.Body)
	fmt.Fprintf(os.Stdout, "HTTP %d %s\n", resp.StatusCode, reply)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("the server refused the notification (see its log for the reason)")
	}
	return nil
}
