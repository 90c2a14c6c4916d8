package providers

import (
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
)

// PrivateKeyFile reads the RSA private key a FILE: flag names, PEM, PKCS #8
// or #1 ("": nil, left for the provider's validation to name).
func PrivateKeyFile(flagName, path string) (*rsa.PrivateKey, error) {
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

// PublicKeyFile reads the RSA public key a FILE: flag names, PEM (PKIX,
// PKCS #1, or a certificate); "": nil.
func PublicKeyFile(flagName, path string) (*rsa.PublicKey, error) {
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

// pemFile is the DER of the first PEM block of path ("": nil); a file
// without one (bare base64, as Alipay's console shows keys) is refused.
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
