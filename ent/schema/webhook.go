package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
)

// Webhook is an HTTP endpoint that receives the order events it subscribed
// to, signed with its secret (Standard Webhooks; webhooks/).
type Webhook struct{ ent.Schema }

func (Webhook) Annotations() []schema.Annotation {
	return table("webhook")
}

func (Webhook) Fields() []ent.Field {
	return []ent.Field{
		id(),
		field.String("url").MaxLen(2048),
		// The event types it receives, comma-separated (OrderPlaced,OrderPaid).
		field.String("events").MaxLen(512),
		field.String("description").MaxLen(512).Default(""),
		// whsec_<base64>: shown once at creation, kept to sign deliveries.
		field.String("secret").MaxLen(128).Sensitive(),
		// The secret rotateWebhookSecret replaced: it signs deliveries
		// beside secret until previous_secret_until, so that a receiver can
		// move to the new one without refusing any (webhooks/sign.go).
		field.String("previous_secret").MaxLen(128).Default("").Sensitive(),
		field.Time("previous_secret_until").SchemaType(datetime).Optional().Nillable(),
		field.Bool("active").Default(true),
		createdAt(),
	}
}
