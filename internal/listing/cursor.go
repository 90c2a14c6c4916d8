package listing

import (
	"encoding/base64"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"time"

	"storefront/internal/vocab/paging"
)

// A listing cursor carries the sort value and id of the row it follows and
// a fingerprint of the filter and sort it was made under: it is refused
// with any other (INVALID_INPUT), so a page never continues a different
// listing.
type cursor struct {
	id    int64
	value any
}

const cursorKind = "goodsList"

func fingerprint(p Params) string {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d|%v|%q|%v|%v|%v|%s|%v", p.Scope, p.Statuses, p.Search, ptr(p.PriceMin), ptr(p.PriceMax), ptr(p.InStock), p.Sort, p.Desc)
	return strconv.FormatUint(h.Sum64(), 36)
}

func ptr[T any](p *T) any {
	if p == nil {
		return "-"
	}
	return *p
}

func encodeCursor(fp string, f Field, v any, id int64) string {
	var s string
	switch v := v.(type) {
	case *string:
		s = *v
	case *time.Time:
		s = v.UTC().Format(time.RFC3339Nano)
	case *int64:
		s = strconv.FormatInt(*v, 10)
	}
	return base64.RawURLEncoding.EncodeToString([]byte(cursorKind + ":" + fp + ":" + strconv.FormatInt(id, 10) + ":" + s))
}

func decodeCursor(c, fp string, f Field) (cursor, error) {
	bad := fmt.Errorf("%w: cursor %q is not one of this listing (same filter and sort)", paging.ErrInvalid, c)
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return cursor{}, bad
	}
	parts := strings.SplitN(string(b), ":", 4)
	if len(parts) != 4 || parts[0] != cursorKind || parts[1] != fp {
		return cursor{}, bad
	}
	out := cursor{}
	if out.id, err = strconv.ParseInt(parts[2], 10, 64); err != nil {
		return cursor{}, bad
	}
	switch f {
	case ByName:
		out.value = parts[3]
	case ByCreated:
		t, err := time.Parse(time.RFC3339Nano, parts[3])
		if err != nil {
			return cursor{}, bad
		}
		out.value = t
	default:
		n, err := strconv.ParseInt(parts[3], 10, 64)
		if err != nil {
			return cursor{}, bad
		}
		out.value = n
	}
	// Only the encoding encodeCursor makes is accepted: ParseInt and
	// time.Parse also take `01`, `+1` or another zone for the same row, and
	// each spelling would be a response-cache entry of its own.
	// Re-encoding what was read must give the cursor back.
	var again string
	switch v := out.value.(type) {
	case string:
		again = encodeCursor(fp, f, &v, out.id)
	case time.Time:
		again = encodeCursor(fp, f, &v, out.id)
	case int64:
		again = encodeCursor(fp, f, &v, out.id)
	}
	if again != c {
		return cursor{}, bad
	}
	return out, nil
}
