package wechatpay

import (
	"storefront/internal/payments"
	"storefront/internal/payments/providers"
)

func init() { providers.Register("wechatpay", func() providers.Settings { return &Settings{} }) }

// Settings are WeChat Pay's flags (docs/payments.md).
type Settings struct {
	MchID       string `name:"wechatpay-mchid" env:"STOREFRONT_WECHATPAY_MCHID" help:"WeChat Pay merchant id (商户号)"`
	AppID       string `name:"wechatpay-appid" env:"STOREFRONT_WECHATPAY_APPID" help:"WeChat Pay AppID bound to the merchant"`
	Serial      string `name:"wechatpay-serial" env:"STOREFRONT_WECHATPAY_SERIAL" help:"serial number of the merchant API certificate"`
	PrivateKey  string `name:"wechatpay-private-key" env:"STOREFRONT_WECHATPAY_PRIVATE_KEY" placeholder:"FILE" help:"FILE: the merchant API private key, PEM (apiclient_key.pem)"`
	PublicKey   string `name:"wechatpay-public-key" env:"STOREFRONT_WECHATPAY_PUBLIC_KEY" placeholder:"FILE" help:"FILE: WeChat Pay's public key, PEM (pub_key.pem)"`
	PublicKeyID string `name:"wechatpay-public-key-id" env:"STOREFRONT_WECHATPAY_PUBLIC_KEY_ID" help:"the id of WeChat Pay's public key (PUB_KEY_ID_…)"`
	APIv3Key    string `name:"wechatpay-apiv3-key" env:"STOREFRONT_WECHATPAY_APIV3_KEY" help:"the APIv3 key (32 bytes), which decrypts notifications"`
	BaseURL     string `name:"wechatpay-base-url" env:"STOREFRONT_WECHATPAY_BASE_URL" default:"https://api.mch.weixin.qq.com" help:"WeChat Pay's API"`
}

// Build reads the key files and validates: WeChat Pay when any of its
// flags was given.
func (s *Settings) Build(env providers.Env) ([]payments.Provider, error) {
	if !env.Given {
		return nil, nil
	}
	c := Config{MchID: s.MchID, AppID: s.AppID, Serial: s.Serial, PublicKeyID: s.PublicKeyID,
		APIv3Key: []byte(s.APIv3Key), BaseURL: s.BaseURL, NotifyURL: env.NotifyURL("wechatpay")}
	var err error
	if c.PrivateKey, err = providers.PrivateKeyFile("--wechatpay-private-key", s.PrivateKey); err != nil {
		return nil, err
	}
	if c.PublicKey, err = providers.PublicKeyFile("--wechatpay-public-key", s.PublicKey); err != nil {
		return nil, err
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return []payments.Provider{New(c)}, nil
}
