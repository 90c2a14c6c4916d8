package main

// The payment providers serve can be configured with: each registers its
// settings, flags and routes in its init (internal/payments/providers).
// Adding a provider is its package and a line here.
import (
	_ "storefront/internal/payments/alipay"
	_ "storefront/internal/payments/mock"
	_ "storefront/internal/payments/stripe"
	_ "storefront/internal/payments/wechatpay"
)
