package main

import (
	"context"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"storefront/internal/payments"
	"storefront/internal/payments/alipay"
	"storefront/internal/payments/mock"
	"storefront/internal/payments/providers"
	"storefront/internal/payments/stripe"
	"storefront/internal/payments/wechatpay"
)

// payFlags are the payment providers' flags (docs/payments.md). A
// provider is switched on by giving any of its flags; then all it needs
// must be given, or serve refuses to start.
type payFlags struct {
	PublicURL string

	WeChatMchID, WeChatAppID, WeChatSerial, WeChatPrivateKey, WeChatPublicKey, WeChatPublicKeyID, WeChatAPIv3Key, WeChatBaseURL string

	AlipayAppID, AlipayPrivateKey, AlipayPublicKey, AlipayGateway string

	StripeSecretKey, StripeWebhookSecret, StripeBaseURL string

	RefundInterval time.Duration
}

func paymentFlags(fs *flag.FlagSet, p *payFlags) {
	str := func(v *string, name, def, usage string) {
		envName := strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
		fs.StringVar(v, name, env(envName, def), usage+" (STOREFRONT_"+envName+")")
	}
	str(&p.PublicURL, "public-url", "", "the shop's public base URL, e.g. https://shop.example.com: providers are told to notify <public-url>/payments/<provider>/notify")
	str(&p.WeChatMchID, "wechatpay-mchid", "", "WeChat Pay merchant id (商户号)")
	str(&p.WeChatAppID, "wechatpay-appid", "", "WeChat Pay AppID bound to the merchant")
	str(&p.WeChatSerial, "wechatpay-serial", "", "serial number of the merchant API certificate")
	str(&p.WeChatPrivateKey, "wechatpay-private-key", "", "FILE: the merchant API private key, PEM (apiclient_key.pem)")
	str(&p.WeChatPublicKey, "wechatpay-public-key", "", "FILE: WeChat Pay's public key, PEM (pub_key.pem)")
	str(&p.WeChatPublicKeyID, "wechatpay-public-key-id", "", "the id of WeChat Pay's public key (PUB_KEY_ID_…)")
	str(&p.WeChatAPIv3Key, "wechatpay-apiv3-key", "", "the APIv3 key (32 bytes), which decrypts notifications")
	str(&p.WeChatBaseURL, "wechatpay-base-url", wechatpay.LiveURL, "WeChat Pay's API")
	str(&p.AlipayAppID, "alipay-app-id", "", "Alipay app id")
	str(&p.AlipayPrivateKey, "alipay-private-key", "", "FILE: the app's private key, PEM (PKCS #1 or #8)")
	str(&p.AlipayPublicKey, "alipay-public-key", "", "FILE: Alipay's public key, PEM")
	str(&p.AlipayGateway, "alipay-gateway", alipay.LiveGateway, "Alipay's gateway")
	str(&p.StripeSecretKey, "stripe-secret-key", "", "Stripe secret key (sk_…)")
	str(&p.StripeWebhookSecret, "stripe-webhook-secret", "", "signing secret of the webhook endpoint <public-url>/payments/stripe/webhook (whsec_…)")
	str(&p.StripeBaseURL, "stripe-base-url", stripe.LiveURL, "Stripe's API")
	fs.DurationVar(&p.RefundInterval, "refund-interval", envDuration("REFUND_INTERVAL", time.Minute), "how often refunds still PENDING at their provider are sent again, with the same refund number (STOREFRONT_REFUND_INTERVAL)")
}

// paymentConfig builds payments' configuration: STOREFRONT_PAYMENT_PROVIDERS'
// mock providers, the demo's mock, and each provider a flag switched on.
func paymentConfig(fs *flag.FlagSet, p *payFlags, demo bool, currency string) (payments.Config, error) {
	cfg := payments.DefaultConfig()
	mocks, err := mock.ParseProviders(env("PAYMENT_PROVIDERS", ""))
	if err != nil {
		return cfg, err
	}
	cfg = cfg.With(mocks...)
	if _, ok := cfg.Providers["mock"]; demo && !ok {
		cfg = cfg.With(mock.Demo(env("MOCK_PAYMENT_SECRET", "")))
	}
	if p.RefundInterval <= 0 {
		return cfg, errors.New("--refund-interval must be positive")
	}
	cfg.RefundRetry = p.RefundInterval
	notify := func(provider string) string {
		if p.PublicURL == "" {
			return ""
		}
		return strings.TrimRight(p.PublicURL, "/") + "/payments/" + provider + "/notify"
	}
	var s providers.Settings
	if anySet(fs, "wechatpay-mchid", "wechatpay-appid", "wechatpay-serial", "wechatpay-private-key", "wechatpay-public-key", "wechatpay-public-key-id", "wechatpay-apiv3-key", "wechatpay-base-url") {
		c := &wechatpay.Config{MchID: p.WeChatMchID, AppID: p.WeChatAppID, Serial: p.WeChatSerial, PublicKeyID: p.WeChatPublicKeyID,
			APIv3Key: []byte(p.WeChatAPIv3Key), BaseURL: p.WeChatBaseURL, NotifyURL: notify("wechatpay")}
		if c.PrivateKey, err = privateKeyFile("--wechatpay-private-key", p.WeChatPrivateKey); err != nil {
			return cfg, err
		}
		if c.PublicKey, err = publicKeyFile("--wechatpay-public-key", p.WeChatPublicKey); err != nil {
			return cfg, err
		}
		s.WeChatPay = c
	}
	if anySet(fs, "alipay-app-id", "alipay-private-key", "alipay-public-key", "alipay-gateway") {
		c := &alipay.Config{AppID: p.AlipayAppID, Gateway: p.AlipayGateway, NotifyURL: notify("alipay")}
		if p.PublicURL != "" {
			c.ReturnURL = strings.TrimRight(p.PublicURL, "/") + "/shop/"
		}
		if c.PrivateKey, err = privateKeyFile("--alipay-private-key", p.AlipayPrivateKey); err != nil {
			return cfg, err
		}
		if c.PublicKey, err = publicKeyFile("--alipay-public-key", p.AlipayPublicKey); err != nil {
			return cfg, err
		}
		s.Alipay = c
	}
	if anySet(fs, "stripe-secret-key", "stripe-webhook-secret", "stripe-base-url") {
		s.Stripe = &stripe.Config{SecretKey: p.StripeSecretKey, WebhookSecret: p.StripeWebhookSecret, BaseURL: p.StripeBaseURL, Currency: currency}
	}
	return providers.Build(cfg, s)
}

// anySet reports whether any of the flags (or their variables) was given.
func anySet(fs *flag.FlagSet, names ...string) bool {
	for _, n := range names {
		if isSet(fs, n) {
			return true
		}
	}
	return false
}

// privateKeyFile reads an RSA private key, PEM, PKCS #8 or #1 ("": nil,
// left for the provider's Validate to name).
func privateKeyFile(flagName, path string) (*rsa.PrivateKey, error) {
	der, err := pemFile(flagName, path)
	if der == nil || err != nil {
		return nil, err
	}
	if k, err := x509.ParsePKCS8PrivateKey(der); err == nil {
		if rk, ok := k.(*rsa.PrivateKey); ok {
			return rk, nil
		}
		return nil, fmt.Errorf("%s %s: not an RSA key", flagName, path)
	}
	k, err := x509.ParsePKCS1PrivateKey(der)
	if err != nil {
		return nil, fmt.Errorf("%s %s: not an RSA private key (PKCS #8 or #1): %w", flagName, path, err)
	}
	return k, nil
}

// publicKeyFile reads an RSA public key, PEM (PKIX, PKCS #1, or a certificate).
func publicKeyFile(flagName, path string) (*rsa.PublicKey, error) {
	der, err := pemFile(flagName, path)
	if der == nil || err != nil {
		return nil, err
	}
	var k any
	if k, err = x509.ParsePKIXPublicKey(der); err != nil {
		if k, err = x509.ParsePKCS1PublicKey(der); err != nil {
			cert, cerr := x509.ParseCertificate(der)
			if cerr != nil {
				return nil, fmt.Errorf("%s %s: not an RSA public key or certificate: %w", flagName, path, err)
			}
			k = cert.PublicKey
		}
	}
	rk, ok := k.(*rsa.PublicKey)
	if !ok {
		return nil, fmt.Errorf("%s %s: not an RSA key", flagName, path)
	}
	return rk, nil
}

// pemFile is the DER of the first PEM block of path ("": nil). A file of
// bare base64 (as Alipay's console shows keys) is taken as one block.
func pemFile(flagName, path string) ([]byte, error) {
	if path == "" {
		return nil, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flagName, err)
	}
	block, _ := pem.Decode(b)
	if block == nil {
		return nil, fmt.Errorf("%s %s: no PEM block", flagName, path)
	}
	return block.Bytes, nil
}

// sweepRefunds sends refunds still PENDING at their provider again every
// interval (the same refund number: never a second refund).
func sweepRefunds(ctx context.Context, pay *payments.Service, interval time.Duration) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		every(ctx, "refunds sent again", interval, pay.SweepRefunds)
	}()
	return func() { cancel(); <-done }
}
