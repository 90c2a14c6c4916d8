package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"storefront/internal/payments/mock"
)

// notifyCmd is `storefront notify`: it signs and sends a provider notification to a running server, so a
// new user can complete a payment by hand (demo: the mock provider).
type notifyCmd struct {
	Provider  string `name:"provider" default:"mock" help:"provider name"`
	OrderSn   string `name:"order" help:"order number (required)"`
	Status    string `name:"status" default:"SUCCESS" help:"SUCCESS, REFUNDED or FAILED"`
	Amount    string `name:"amount" help:"amount, e.g. 89.00 (required: the order's amount)"`
	Currency  string `name:"currency" default:"CNY" help:"currency"`
	Merchant  string `name:"merchant" default:"mock-merchant" help:"merchant id"`
	PaymentID string `name:"payment-id" help:"provider payment id (default: derived from the order)"`
	EventID   string `name:"event-id" help:"provider event id (default: a fresh one)"`
	URL       string `name:"url" env:"STOREFRONT_NOTIFY_URL" default:"http://127.0.0.1:8080" help:"server base URL"`
	Secret    string `name:"secret" env:"STOREFRONT_MOCK_PAYMENT_SECRET" default:"mock-secret" help:"provider secret"`
}

func (c *notifyCmd) Run() error {
	if c.OrderSn == "" || c.Amount == "" {
		return errors.New("--order and --amount are required")
	}
	if c.PaymentID == "" {
		c.PaymentID = "pay-" + c.OrderSn
	}
	if c.EventID == "" {
		c.EventID = fmt.Sprintf("evt-%s-%d", c.OrderSn, time.Now().UnixNano())
	}
	body, err := json.Marshal(mock.Notification{
		EventID: c.EventID, PaymentID: c.PaymentID, OrderSn: c.OrderSn, Amount: c.Amount, Currency: c.Currency,
		MerchantID: c.Merchant, Status: strings.ToUpper(c.Status), Timestamp: time.Now().Unix(),
	})
	if err != nil {
		return err
	}
	req, err := http.NewRequest("POST", strings.TrimRight(c.URL, "/")+"/payments/"+c.Provider+"/notify", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Signature", mock.Sign(c.Secret, body))
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
