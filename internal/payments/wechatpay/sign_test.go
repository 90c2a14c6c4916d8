package wechatpay

import (
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"net/http"
	"strings"
	"testing"
	"time"

	"storefront/internal/payments"
)

// The worked examples below are WeChat Pay's own: its Go SDK's tests
// (wechatpay-apiv3/wechatpay-go, core/auth/signers and core/notify), whose
// test key, certificate, signature and notification are published with it,
// and the signature guide's message. The key is spelled "TESTING KEY" there
// so that scanners do not take it for a secret; it is one.

const sdkTestKey = `-----BEGIN TESTING KEY-----
MIIEvgIBADANBgkqhkiG9w0BAQEFAASCBKgwggSkAgEAAoIBAQDZUJN33V+dSfvd
fL0Mu+39XrZNXFFMQSy1V15FpncHeV47SmV0TzTqZc7hHB0ddqAdDi8Z5k3TKqb7
6sOwYr5TcAfuR6PIPaleyE0/0KrljBum2Isa2Nyq7Dgc3ElBQ6YN4l/a+DpvKaz1
FSKmKrhLNskqokWVSlu4g8OlKlbPXQ9ibII14MZRQrrkTmHYHzfi7GXXM0thAKuR
0HNvyhTHBh4/lrYM3GaMvmWwkwvsMavnOex6+eioZHBOb1/EIZ/LzC6zuHArPpyW
3daGaZ1rtQB1vVzTyERAVVFsXXgBHvfFud3w3ShsJYk8JvMwK2RpJ5/gV0QSARcm
LDRUAlPzAgMBAAECggEBAMc7rDeUaXiWv6bMGbZ3BTXpg1FhdddnWUnYE8HfX/km
OFI7XtBHXcgYFpcjYz4D5787pcsk7ezPidAj58zqenuclmjKnUmT3pfbI5eCA2v4
C9HnbYDrmUPK1ZcADtka4D6ScDccpNYNa1g2TFHzkIrEa6H+q7S3O2fqxY/DRVtN
0JIXalBb8daaqL5QVzSmM2BMVnHy+YITJWIkP2a3pKs9C0W65JGDsnG0wVrHinHF
+cnhFZIbaPEI//DAFMc9NkrWOKVRTEgcCUxCFaHOZVNxDWZD7A2ZfJB2rK6eg//y
gEiFDR2h6mTaDowMB4YF2n2dsIO4/dCG8vPHI20jn4ECgYEA/ZGu6lEMlO0XZnam
AZGtiNgLcCfM/C2ZERZE7QTRPZH1WdK92Al9ndldsswFw4baJrJLCmghjF/iG4zi
hhBvLnOLksnZUfjdumxoHDWXo2QBWbI5QsWIE7AuTiWgWj1I7X4fCXSQf6i+M/y2
6TogQ7d0ANpZFyOkTNMn/tiJvLECgYEA22XqlamG/yfAGWery5KNH2DGlTIyd6xJ
WtJ9j3jU99lZ0bCQ5xhiBbU9ImxCi3zgTsoqLWgA/p00HhNFNoUcTl9ofc0G3zwT
D1y0ZzcnVKxGJdZ6ohW52V0hJStAigtjYAsUgjm7//FH7PiQDBDP1Wa6xSRkDQU/
aSbQxvEE8+MCgYEA3bb8krW7opyM0XL9RHH0oqsFlVO30Oit5lrqebS0oHl3Zsr2
ZGgoBlWBsEzk3UqUhTFwm/DhJLTSJ/TQPRkxnhQ5/mewNhS9C7yua7wQkzVmWN+V
YeUGTvDGDF6qDz12/vJAgSwDDRym8x4NcXD5tTw7mmNRcwIfL22SkysThIECgYAV
BgccoEoXWS/HP2/u6fQr9ZIR6eV8Ij5FPbZacTG3LlS1Cz5XZra95UgebFFUHHtC
EY1JHJY7z8SWvTH8r3Su7eWNaIAoFBGffzqqSVazfm6aYZsOvRY6BfqPHT3p/H1h
Tq6AbBffxrcltgvXnCTORjHPglU0CjSxVs7awW3AEQKBgB5WtaC8VLROM7rkfVIq
+RXqE5vtJfa3e3N7W3RqxKp4zHFAPfr82FK5CX2bppEaxY7SEZVvVInKDc5gKdG/
jWNRBmvvftZhY59PILHO2X5vO4FXh7suEjy6VIh0gsnK36mmRboYIBGsNuDHjXLe
BDa+8mDLkWu5nHEhOxy2JJZl
-----END TESTING KEY-----`

const sdkTestCertificate = `-----BEGIN CERTIFICATE-----
MIIDVzCCAj+gAwIBAgIJANfOWdH1ItcBMA0GCSqGSIb3DQEBCwUAMEIxCzAJBgNV
BAYTAlhYMRUwEwYDVQQHDAxEZWZhdWx0IENpdHkxHDAaBgNVBAoME0RlZmF1bHQg
Q29tcGFueSBMdGQwHhcNMjEwNDI3MDg1NTIzWhcNMzEwNDI1MDg1NTIzWjBCMQsw
CQYDVQQGEwJYWDEVMBMGA1UEBwwMRGVmYXVsdCBDaXR5MRwwGgYDVQQKDBNEZWZh
dWx0IENvbXBhbnkgTHRkMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA
2VCTd91fnUn73Xy9DLvt/V62TVxRTEEstVdeRaZ3B3leO0pldE806mXO4RwdHXag
HQ4vGeZN0yqm++rDsGK+U3AH7kejyD2pXshNP9Cq5YwbptiLGtjcquw4HNxJQUOm
DeJf2vg6byms9RUipiq4SzbJKqJFlUpbuIPDpSpWz10PYmyCNeDGUUK65E5h2B83
4uxl1zNLYQCrkdBzb8oUxwYeP5a2DNxmjL5lsJML7DGr5znsevnoqGRwTm9fxCGf
y8wus7hwKz6clt3Whmmda7UAdb1c08hEQFVRbF14AR73xbnd8N0obCWJPCbzMCtk
aSef4FdEEgEXJiw0VAJT8wIDAQABo1AwTjAdBgNVHQ4EFgQUT1c7nd/SUO76HSoZ
umNUJv1R5PwwHwYDVR0jBBgwFoAUT1c7nd/SUO76HSoZumNUJv1R5PwwDAYDVR0T
BAUwAwEB/zANBgkqhkiG9w0BAQsFAAOCAQEAfTjxKRQMzNB/U6ZoCUS+BSNfa2Oh
0plMN6ZuzwiVVZwg1jywvv5yv04koS7Pd4i9E4gt9ZBUQXlpq+A3oOCEEHNRR6b2
kyazGRM7s0OP5X21WrbpSmKmU6K7hkfx30yYs08LVs/Q8DIhvaj1FCFeJzUCzYn/
fHMq4tsbKO0dKAeydPM/nrUZBmaYQVKMVOORGLFjFKVO7JV6Kq/R86ouhjEPgJOe
2xulNBUcjicqtZlBdEh/PWCYP2SpGVDclKm8jeo175T3EVAkdKzzmfpxtMmnMlmq
cTJOU9TxuGvNASMtjj7pYIerTx+xgZDXEVBWFW9PjJ0TV06tCRsgSHItgg==
-----END CERTIFICATE-----`

func sdkKey(t *testing.T) *rsa.PrivateKey {
	t.Helper()
	block, _ := pem.Decode([]byte(strings.ReplaceAll(sdkTestKey, "TESTING KEY", "PRIVATE KEY")))
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return k.(*rsa.PrivateKey)
}

func sdkCertKey(t *testing.T) *rsa.PublicKey {
	t.Helper()
	block, _ := pem.Decode([]byte(sdkTestCertificate))
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c.PublicKey.(*rsa.PublicKey)
}

// The SDK's signer test: "source" signed with its test key.
func TestSignReproducesTheSDKsSignature(t *testing.T) {
	const want = "BKyAfU4iMCuvXMXS0Wzam3V/cnxZ+JaqigPM5OhljS2iOT95OO6Fsuml2JkFANJU9K6q9bLlDhPXuoVz+pp4hAm6" +
		"pHU4ld815U4jsKu1RkyaII+1CYBUYC8TK0XtJ8FwUXXz8vZHh58rrAVN1XwNyvD1vfpxrMT4SL536GLwvpUHlCqIMzoZUguLli/K8V29QiOh" +
		"uH6IEqLNJn8e9b3nwNcQ7be3CzYGpDAKBfDGPCqCv8Rw5zndhlffk2FEA70G4hvMwe51qMN/RAJbknXG23bSlObuTCN7Ndj1aJGH6/L+hdwf" +
		"LpUtJm4QYVazzW7DFD27EpSQEqA8bX9+8m1rLg=="
	got, err := Sign(sdkKey(t), "source")
	if err != nil || got != want {
		t.Errorf("Sign(\"source\") = %q, %v; want the SDK's %q", got, err, want)
	}
}

// The signature guide's message for GET /v3/certificates, and the
// Authorization header's published shape.
func TestMessageAndAuthorizationAsPublished(t *testing.T) {
	const want = "GET\n/v3/certificates\n1554208460\n593BEC0C930BF1AFEB40B4A08C8FB242\n\n"
	if got := Message("GET", "/v3/certificates", 1554208460, "593BEC0C930BF1AFEB40B4A08C8FB242", ""); got != want {
		t.Errorf("Message = %q, want %q", got, want)
	}
	const auth = `WECHATPAY2-SHA256-RSA2048 mchid="1900009191",nonce_str="593BEC0C930BF1AFEB40B4A08C8FB242",timestamp="1554208460",serial_no="1DDE55AD98ED71D6EDD4A4A16996DE7B47773A8C",signature="uOVRnA4qG"`
	if got := Authorization("1900009191", "1DDE55AD98ED71D6EDD4A4A16996DE7B47773A8C", "593BEC0C930BF1AFEB40B4A08C8FB242", 1554208460, "uOVRnA4qG"); got != auth {
		t.Errorf("Authorization = %q, want %q", got, auth)
	}
	f, err := ParseAuthorization(auth)
	if err != nil || f["serial_no"] != "1DDE55AD98ED71D6EDD4A4A16996DE7B47773A8C" || f["signature"] != "uOVRnA4qG" {
		t.Errorf("ParseAuthorization = %v, %v", f, err)
	}
}

// The SDK's notification test: its headers and body verify with its
// certificate's key (the public-key mode names the key by
// Wechatpay-Serial), and its resource decrypts under its key to exactly
// its plaintext. That key is 16 bytes (AES-128): the SDK's test; a real
// APIv3 key is 32 (AES-256), which the provider's configuration requires.
func TestSDKNotificationVerifiesAndDecrypts(t *testing.T) {
	const (
		apiV3Key  = "testMchAPIv3Key0"
		data      = `{"mchid":"1234567890","appid":"054aa7d7a2a54ab5898df65bd96f001c","create_time":"2020-06-30T12:12:00+08:00","out_contract_code":"21640bdbd08e473e828f3206a2741c6e"}`
		body      = `{"id":"3119dfba-e649-5eec-ab1e-3412bc4d2e17","create_time":"2021-06-24T16:37:26+08:00","resource_type":"encrypt-resource","event_type":"PAYSCORE.USER_OPEN_SERVICE","summary":"签约成功","resource":{"original_type":"payscore","algorithm":"AEAD_AES_256_GCM","ciphertext":"YDS3lKPaC4Y52Gf3uhft5qUBlIa8b428AWTtTauHQfQrRw+X1WpiuHIDy0vo1Vd6VEq67aVyqPdDYMkRVSDaZL3iZttevRMOoPKMifozg6XPWjIZumks/GpT48lI4NizyeaqLBokNebthah3o1H76qSlO9NkDjp9bzmKLEYYH9TEklFUpsvPqOTOcgSLgh21YJXYR7dEBXFgRLiNIKRgO5JdXh1hccRUAlyVWxE54PXpnQ==","associated_data":"payscore","nonce":"Kj7QIyUiYx1q"}}`
		signature = "tJHIiIS9eB2hAYstmAmbbD3ZE5LiIm/Ug5tuL4fC0YOFRWIHV39UFIZXC0e9Wl6lBu6sKvkqDkzpqzBsVHyXF" +
			"lbYZTOQrVdG4b6LfTnK4mikv9++ixJMd3vTf2yCqvBkh98zs3Ds5zsYQakzbcwhmw4fMJs4nPLws28H0UW9FjDR//rxELLwXvV1VEA1I" +
			"BLX70xptjL8hrfUjEE8kkry6yNJTHZRU8CAc7qHli2Ng1V1qb9ARbK8A3ThmFmPQvRGrapI/jS2laKKgYUmfdEdkNO6B2Cke5e8VTxY4" +
			"06ArAmQ90GAihDwIcb16TQMnzCMBoutnwZKNiKRACrFmtxw2Q=="
	)
	plain, err := Decrypt([]byte(apiV3Key), "Kj7QIyUiYx1q", "payscore", "YDS3lKPaC4Y52Gf3uhft5qUBlIa8b428AWTtTauHQfQrRw+X1WpiuHIDy0vo1Vd6VEq67aVyqPdDYMkRVSDaZL3iZttevRMOoPKMifozg6XPWjIZumks/GpT48lI4NizyeaqLBokNebthah3o1H76qSlO9NkDjp9bzmKLEYYH9TEklFUpsvPqOTOcgSLgh21YJXYR7dEBXFgRLiNIKRgO5JdXh1hccRUAlyVWxE54PXpnQ==")
	if err != nil || string(plain) != data {
		t.Errorf("Decrypt = %q, %v; want %q", plain, err, data)
	}
	p := New(Config{MchID: "1234567890", PublicKey: sdkCertKey(t), PublicKeyID: "D7CE59D1F522D701", APIv3Key: []byte(apiV3Key)})
	h := http.Header{HeaderNonce: {"EcZ9Cmy4Xyx1i6RlJQzLcCyEqDa26NBz"}, HeaderTimestamp: {"1624523846"},
		HeaderSerial: {"D7CE59D1F522D701"}, HeaderSignature: {signature}}
	in := payments.Incoming{Header: h, Body: []byte(body), Now: time.Unix(1624523846+60, 0), Tolerance: 5 * time.Minute}
	n, err := p.Verify(in)
	if err != nil || !n.Ignore { // a PAYSCORE event: genuine, and nothing this shop acts on
		t.Errorf("Verify(the SDK's notification) = %+v, %v; want verified and ignored", n, err)
	}
	// Its signature is the SDK key's over timestamp\nnonce\nbody\n.
	if got, _ := Sign(sdkKey(t), ResponseMessage("1624523846", "EcZ9Cmy4Xyx1i6RlJQzLcCyEqDa26NBz", body)); got != signature {
		t.Errorf("signing the SDK's notification = %q, want its Wechatpay-Signature", got)
	}
	for name, mutate := range map[string]func(*payments.Incoming){
		"one byte of the body": func(in *payments.Incoming) {
			in.Body = []byte(strings.Replace(body, "签约成功", "签约失败", 1))
		},
		"another key id":        func(in *payments.Incoming) { in.Header = cloneWith(h, HeaderSerial, "PUB_KEY_ID_OTHER") },
		"six minutes later":     func(in *payments.Incoming) { in.Now = time.Unix(1624523846+360, 0) },
		"another nonce":         func(in *payments.Incoming) { in.Header = cloneWith(h, HeaderNonce, "x") },
		"a signature of base64": func(in *payments.Incoming) { in.Header = cloneWith(h, HeaderSignature, "!") },
	} {
		bad := in
		mutate(&bad)
		if _, err := p.Verify(bad); err == nil {
			t.Errorf("%s: verified", name)
		}
	}
}

func cloneWith(h http.Header, k, v string) http.Header {
	c := h.Clone()
	c.Set(k, v)
	return c
}
