package catalog

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"storefront/ent"
	"storefront/ent/goods"
	"storefront/internal/vocab/errs"
	"storefront/internal/vocab/media"
)

// Product-page content: description, images and the slug a page is found
// by. Checked before any transaction opens, so bad content changes nothing.
const (
	MaxDescription = 20_000 // characters
	MaxImages      = 20
	maxImageURL    = 2048 // bytes
	maxImageAlt    = 200  // characters
	maxSlug        = 120  // bytes (all ASCII)
)

// Content is the editable text and pictures of a goods; nil leaves a field
// as it is (an edit), Slug nil on creation makes one from the code.
type Content struct {
	Description *string
	Images      *[]media.Image
	Slug        *string
}

func (c Content) check() error {
	if c.Description != nil {
		if n := utf8.RuneCountInString(*c.Description); n > MaxDescription {
			return fmt.Errorf("%w: description has %d characters, at most %d", errs.InvalidInput, n, MaxDescription)
		}
		if !utf8.ValidString(*c.Description) {
			return fmt.Errorf("%w: description is not UTF-8", errs.InvalidInput)
		}
	}
	if c.Images != nil {
		if err := checkImages(*c.Images); err != nil {
			return err
		}
	}
	if c.Slug != nil {
		return checkSlug("goods", *c.Slug)
	}
	return nil
}

func checkImages(images []media.Image) error {
	if len(images) > MaxImages {
		return fmt.Errorf("%w: %d images, at most %d", errs.InvalidInput, len(images), MaxImages)
	}
	for i, im := range images {
		if err := checkImageURL(im.URL); err != nil {
			return fmt.Errorf("%w: image %d: %w", errs.InvalidInput, i+1, err)
		}
		if n := utf8.RuneCountInString(im.Alt); n > maxImageAlt || strings.ContainsFunc(im.Alt, unicode.IsControl) {
			return fmt.Errorf("%w: image %d: alt text must be at most %d characters without control characters", errs.InvalidInput, i+1, maxImageAlt)
		}
	}
	return nil
}

// checkImageURL admits an https:// URL with a host, or a path on this
// server ("/…", never "//host", which a browser reads as another host).
func checkImageURL(s string) error {
	if s == "" || len(s) > maxImageURL || strings.ContainsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) {
		return fmt.Errorf("url must be 1 to %d bytes without spaces", maxImageURL)
	}
	if strings.HasPrefix(s, "/") && !strings.HasPrefix(s, "//") && !strings.HasPrefix(s, "/\\") {
		return nil
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil {
		return fmt.Errorf("url %q must start with https:// or /", s)
	}
	return nil
}

var slugPattern = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// checkSlug admits lowercase letters, digits and single inner dashes. The
// form <kind>-<digits> is reserved for the slug made from an id.
func checkSlug(kind, s string) error {
	if len(s) > maxSlug || !slugPattern.MatchString(s) {
		return fmt.Errorf("%w: slug %q must be lowercase a-z, 0-9 and single dashes between them, at most %d characters", errs.InvalidInput, s, maxSlug)
	}
	if rest, ok := strings.CutPrefix(s, kind+"-"); ok && strings.Trim(rest, "0123456789") == "" {
		return fmt.Errorf("%w: slug %q is reserved (%s-<id> is made for whoever has no other)", errs.InvalidInput, s, kind)
	}
	return nil
}

// slugFrom makes a slug of a code or name: lowercased, every run of other
// characters a dash; "" when nothing usable is left (a Chinese name).
func slugFrom(kind, s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
			if b.Len() >= maxSlug-1 {
				break
			}
			continue
		}
		dash = true
	}
	out := strings.TrimRight(b.String(), "-")
	if checkSlug(kind, out) != nil {
		return ""
	}
	return out
}

// nameGoods gives a goods created without a slug the one made from its
// code, or goods-<id> when that gives nothing or is taken.
func nameGoods(ctx context.Context, tx *ent.Tx, id int64, code string) error {
	slug := slugFrom("goods", code)
	if slug != "" {
		taken, err := tx.Goods.Query().Where(goods.Slug(slug)).Exist(ctx)
		if err != nil {
			return err
		}
		if taken {
			slug = ""
		}
	}
	if slug == "" {
		slug = fmt.Sprintf("goods-%d", id)
	}
	return tx.Goods.UpdateOneID(id).SetSlug(slug).Exec(ctx)
}
