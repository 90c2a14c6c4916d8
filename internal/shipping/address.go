package shipping

import (
	"context"
	"database/sql"
	"fmt"

	entsql "entgo.io/ent/dialect/sql"

	"storefront/ent"
	"storefront/ent/address"
	"storefront/ent/addressbook"
	"storefront/internal/platform/store"
	"storefront/internal/vocab/errs"
)

// The address book. Every change takes the customer's address_book row
// first (made if missing, then read FOR UPDATE): the limit of MaxAddresses
// is a CAS on its count, and the default is the row's default_address_id,
// so concurrent adds cannot pass the limit and a book that is not empty
// always has exactly one default. The first address is the default; a new
// default is named by isDefault: true; removing the default makes the
// newest remaining address the default.

// Addresses is user's book, the default first, then the newest first. One
// statement reads the addresses with the book's default, so that a change
// committed between two reads cannot show a book without its default.
func (s *Service) Addresses(ctx context.Context, user string) ([]*Address, error) {
	rs, err := s.db.Client.QueryContext(ctx, "SELECT a.id, a.name, a.phone, a.region_code, a.province, a.city, a.district, a.line, a.postal_code, "+
		"b.default_address_id FROM address a JOIN address_book b ON b.user_id = a.user_id WHERE a.user_id = ? ORDER BY a.id DESC", user)
	if err != nil {
		return nil, store.Classify(fmt.Errorf("reading addresses: %w", err))
	}
	defer rs.Close()
	out := []*Address{}
	for rs.Next() {
		var (
			a   Address
			def sql.NullInt64
		)
		if err := rs.Scan(&a.ID, &a.Name, &a.Phone, &a.RegionCode, &a.Province, &a.City, &a.District, &a.Line, &a.PostalCode, &def); err != nil {
			return nil, fmt.Errorf("reading addresses: %w", err)
		}
		a.IsDefault = def.Valid && def.Int64 == a.ID
		a.OrderAddress = a.OrderAddress.named()
		if a.IsDefault {
			out = append([]*Address{&a}, out...)
		} else {
			out = append(out, &a)
		}
	}
	return out, store.Classify(rs.Err())
}

// AddAddress adds in to user's book.
func (s *Service) AddAddress(ctx context.Context, user string, in AddressInput) (*Address, error) {
	return s.editBook(ctx, user, in, func(ctx context.Context, tx *ent.Tx, book *ent.AddressBook, a OrderAddress) (*Address, error) {
		n, err := tx.AddressBook.Update().Where(addressbook.ID(book.ID), addressbook.AddressesLT(MaxAddresses)).AddAddresses(1).Save(ctx)
		if err != nil {
			return nil, fmt.Errorf("counting the address: %w", err)
		}
		if n == 0 {
			return nil, fmt.Errorf("%w: an address book holds at most %d addresses; remove one first", errs.InvalidInput, MaxAddresses)
		}
		now := s.now()
		row, err := tx.Address.Create().SetUserID(user).SetName(a.Name).SetPhone(a.Phone).SetRegionCode(a.RegionCode).
			SetProvince(a.Province).SetCity(a.City).SetDistrict(a.District).SetLine(a.Line).SetPostalCode(a.PostalCode).
			SetCreatedAt(now).SetUpdatedAt(now).Save(ctx)
		if err != nil {
			return nil, fmt.Errorf("adding the address: %w", err)
		}
		def := book.DefaultAddressID
		if in.IsDefault || def == nil {
			if def, err = setDefault(ctx, tx, book.ID, row.ID); err != nil {
				return nil, err
			}
		}
		return addressOf(row, def), nil
	})
}

// editBook checks in, then runs edit in a transaction holding user's
// address book (lockBook: one writer of a book at a time).
func (s *Service) editBook(ctx context.Context, user string, in AddressInput,
	edit func(context.Context, *ent.Tx, *ent.AddressBook, OrderAddress) (*Address, error)) (*Address, error) {
	a, err := in.OrderAddress.check()
	if err != nil {
		return nil, err
	}
	var out *Address
	err = store.WithTx(ctx, s.db, func(ctx context.Context, tx *ent.Tx) error {
		book, err := lockBook(ctx, tx, user)
		if err != nil {
			return err
		}
		out, err = edit(ctx, tx, book, a)
		return err
	})
	return out, store.Classify(err)
}

// UpdateAddress replaces the fields of user's address id; isDefault: true
// makes it the default (false leaves the default where it is: another
// address becomes the default only by being named).
func (s *Service) UpdateAddress(ctx context.Context, user string, id int64, in AddressInput) (*Address, error) {
	return s.editBook(ctx, user, in, func(ctx context.Context, tx *ent.Tx, book *ent.AddressBook, a OrderAddress) (*Address, error) {
		// Found first: MySQL counts only the rows an UPDATE changed, and an
		// update may change nothing.
		if ok, err := tx.Address.Query().Where(address.ID(id), address.UserID(user)).Exist(ctx); err != nil || !ok {
			if err == nil {
				err = fmt.Errorf("%w: no address %d in your book", errs.NotFound, id)
			}
			return nil, err
		}
		err := tx.Address.Update().Where(address.ID(id), address.UserID(user)).SetName(a.Name).SetPhone(a.Phone).
			SetRegionCode(a.RegionCode).SetProvince(a.Province).SetCity(a.City).SetDistrict(a.District).SetLine(a.Line).
			SetPostalCode(a.PostalCode).SetUpdatedAt(s.now()).Exec(ctx)
		if err != nil {
			return nil, fmt.Errorf("updating address %d: %w", id, err)
		}
		def := book.DefaultAddressID
		if in.IsDefault {
			if def, err = setDefault(ctx, tx, book.ID, id); err != nil {
				return nil, err
			}
		}
		row, err := tx.Address.Get(ctx, id)
		if err != nil {
			return nil, err
		}
		return addressOf(row, def), nil
	})
}

// RemoveAddress deletes user's address id from the book (orders keep their
// copies).
func (s *Service) RemoveAddress(ctx context.Context, user string, id int64) error {
	err := store.WithTx(ctx, s.db, func(ctx context.Context, tx *ent.Tx) error {
		book, err := lockBook(ctx, tx, user)
		if err != nil {
			return err
		}
		n, err := tx.Address.Delete().Where(address.ID(id), address.UserID(user)).Exec(ctx)
		if err != nil {
			return fmt.Errorf("removing address %d: %w", id, err)
		}
		if n == 0 {
			return fmt.Errorf("%w: no address %d in your book", errs.NotFound, id)
		}
		u := tx.AddressBook.UpdateOneID(book.ID).AddAddresses(-1)
		if book.DefaultAddressID != nil && *book.DefaultAddressID == id {
			next, err := tx.Address.Query().Where(address.UserID(user)).Order(address.ByID(entsql.OrderDesc())).FirstID(ctx)
			switch {
			case ent.IsNotFound(err):
				u.ClearDefaultAddressID()
			case err != nil:
				return err
			default:
				u.SetDefaultAddressID(next)
			}
		}
		return u.Exec(ctx)
	})
	return store.Classify(err)
}

// lockBook makes sure user's book row exists and reads it under an
// exclusive lock (SQLite's one writer needs none): every change of the
// book's addresses is serialised on it.
func lockBook(ctx context.Context, tx *ent.Tx, user string) (*ent.AddressBook, error) {
	ins := store.NewInsert(addressbook.Table).Row(func(v store.Values) {
		v.Str(addressbook.FieldUserID, user)
		v.Int(addressbook.FieldAddresses, 0)
	})
	if err := store.EnsureRow(ctx, tx, ins, addressbook.FieldUserID); err != nil {
		return nil, fmt.Errorf("making the address book: %w", err)
	}
	var rows []struct {
		ID      int64         `sql:"id"`
		Default sql.NullInt64 `sql:"default_address_id"`
	}
	err := tx.AddressBook.Query().Where(addressbook.UserID(user)).Modify(func(s *entsql.Selector) {
		s.Select(s.C(addressbook.FieldID), s.C(addressbook.FieldDefaultAddressID))
		store.UpdateLock(s)
	}).Scan(ctx, &rows)
	if err != nil || len(rows) != 1 {
		return nil, fmt.Errorf("locking the address book (%d rows): %w", len(rows), err)
	}
	b := &ent.AddressBook{ID: rows[0].ID}
	if rows[0].Default.Valid {
		b.DefaultAddressID = &rows[0].Default.Int64
	}
	return b, nil
}

func setDefault(ctx context.Context, tx *ent.Tx, book, id int64) (*int64, error) {
	if err := tx.AddressBook.UpdateOneID(book).SetDefaultAddressID(id).Exec(ctx); err != nil {
		return nil, fmt.Errorf("setting the default address: %w", err)
	}
	return &id, nil
}

func addressOf(r *ent.Address, def *int64) *Address {
	return &Address{ID: r.ID, IsDefault: def != nil && *def == r.ID, OrderAddress: OrderAddress{
		Name: r.Name, Phone: r.Phone, RegionCode: r.RegionCode, Province: r.Province, City: r.City,
		District: r.District, Line: r.Line, PostalCode: r.PostalCode}.named()}
}
