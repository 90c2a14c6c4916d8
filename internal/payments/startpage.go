package payments

// The ways a buyer's page pays, each a field of GraphQL's PaymentStart: a
// provider fills in Started.Page under the names of those it uses.
const (
	PageQRCode       = "qrCode"       // a code to render as a QR code (WeChat Pay Native's code_url)
	PageRedirectURL  = "redirectUrl"  // a URL to send the buyer to (Alipay's signed page pay)
	PageClientSecret = "clientSecret" // a secret for the provider's script (a PaymentIntent's, for Stripe.js)
)

// QrCode is PaymentStart.qrCode (nil: not this provider's way).
func (s Started) QrCode() *string { return s.page(PageQRCode) }

// RedirectURL is PaymentStart.redirectUrl.
func (s Started) RedirectURL() *string { return s.page(PageRedirectURL) }

// ClientSecret is PaymentStart.clientSecret.
func (s Started) ClientSecret() *string { return s.page(PageClientSecret) }

func (s Started) page(name string) *string {
	v, ok := s.Page[name]
	if !ok {
		return nil
	}
	return &v
}
