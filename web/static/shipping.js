// The customer's address book (schema.shipping.graphql): a picker of the
// saved addresses, the default chosen first, and a form to add one. The
// cart prices its shipping for the chosen address and checks out to it
// (cart.js); "My orders" gives an order placed without one an address
// (orders.js). Every field is checked again by the server, which answers
// INVALID_INPUT naming the field.
import { h } from "./dom.js";
import { gql } from "./graphql.js";

const addressFields = "id name phone regionCode province city district line postalCode isDefault";
const bookQuery = `query MyAddresses { myAddresses { ${addressFields} } }`;
const addMutation = `mutation AddAddress($in: AddressInput!) { addAddress(input: $in) { ${addressFields} } }`;

export function addressText(a) {
  return `${a.name} ${a.phone} · ${a.province}${a.city === a.province ? "" : " " + a.city} ${a.district} ${a.line}`;
}

export class AddressBook {
  constructor(session, onChange) {
    this.session = session;
    this.onChange = onChange;
    this.addresses = [];
    this.selected = "";
    this.root = h("div", { class: "address-book", "data-testid": "address-book" });
  }

  async load() {
    if (!this.session.token) {
      this.addresses = [];
      this.selected = "";
      this.render();
      return;
    }
    try {
      this.addresses = (await gql(bookQuery, {}, { token: this.session.token })).myAddresses;
    } catch (e) {
      this.addresses = [];
      this.error = `${e.code}: ${e.message}`;
    }
    if (!this.addresses.some((a) => a.id === this.selected)) {
      this.selected = this.addresses.length ? this.addresses[0].id : ""; // the default comes first
    }
    this.render();
    this.onChange();
  }

  choose(id) {
    this.selected = id;
    this.render();
    this.onChange();
  }

  async add(form) {
    const v = (n) => form.elements[n].value.trim();
    const input = {
      name: v("name"), phone: v("phone"), regionCode: v("regionCode"),
      line: v("line"), postalCode: v("postalCode") || null, isDefault: form.elements.isDefault.checked,
    };
    this.error = "";
    try {
      const a = (await gql(addMutation, { in: input }, { token: this.session.token })).addAddress;
      this.formOpen = false;
      form.reset();
      this.selected = a.id;
      await this.load();
    } catch (e) {
      this.error = `${e.code}: ${e.message}`;
      this.render();
    }
  }

  newForm() {
    const input = (name, label, attrs = {}) => h("label", {}, label, h("input", { name, "aria-label": label, ...attrs }));
    return h("form", {
      class: "address-form", "data-testid": "address-form",
      onsubmit: (e) => {
        e.preventDefault();
        this.add(e.target);
      },
    },
    input("name", "Name", { required: true, maxlength: 64 }),
    input("phone", "Phone", { required: true, inputmode: "tel", pattern: "\\+?[0-9]{3,19}" }),
    // The province, city and district are the names of the region code
    // (the server derives them), so they are not asked for.
    input("regionCode", "Region code", { required: true, inputmode: "numeric", pattern: "[0-9]{6}", placeholder: "310104",
      title: "The district's 6-digit code (GB/T 2260): its province, city and district follow from it" }),
    input("line", "Street and number", { required: true, maxlength: 120 }),
    input("postalCode", "Postal code", {}),
    h("label", { class: "check" }, h("input", { type: "checkbox", name: "isDefault" }), " Make it the default"),
    h("button", { type: "submit", "data-testid": "address-save" }, "Save the address"));
  }

  render() {
    if (!this.session.token) {
      this.root.replaceChildren(h("p", { class: "status" }, "Sign in to choose where your order goes."));
      return;
    }
    const picker = this.addresses.length
      ? h("label", { class: "ship-to" }, "Ship to ",
        h("select", {
          "data-testid": "address-picker", "aria-label": "Ship to",
          onchange: (e) => this.choose(e.target.value),
        }, this.addresses.map((a) => {
          const o = h("option", { value: a.id }, addressText(a) + (a.isDefault ? " (default)" : ""));
          o.selected = a.id === this.selected;
          return o;
        })))
      : h("p", { class: "status" }, "No address yet.");
    const toggle = h("button", {
      type: "button", class: "link", "data-testid": "address-new", onclick: () => {
        this.formOpen = !this.formOpen;
        this.render();
      },
    }, this.formOpen ? "Cancel" : "Add an address");
    // Built once: a refused save keeps what was typed.
    this.form = this.form || this.newForm();
    const form = this.formOpen && this.form;
    this.root.replaceChildren(picker, toggle, form || "",
      this.error ? h("p", { class: "error", "data-testid": "address-error" }, this.error) : "");
  }
}
