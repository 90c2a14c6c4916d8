package bench

// PageQuery is the product page of ../shared/bench/gqlceiling/page.lua with
// the goods and the selected values as variables: what a shopper's browser
// asks for, and what the benchmarks and bench/pageclient send.
const PageQuery = `query($id: ID!, $sel: [ID!]) { goods(id: $id) { id name specs { id name values { id name } } skus { id specValueIds sellPrice stock status } priceRange { min max } totalStock selectable(selected: $sel) { specValueId selectable } } }`
