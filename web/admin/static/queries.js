// The GraphQL documents of the editor: all of them the admin API's own
// operations (schema.admin.graphql), nothing the console adds.

const goodsFields = `id name code version status stockMode description purchaseLimit
  category { id name path { name } }
  specs { id name values { id name } }
  skus(includeDisabled: true) { id specValueIds specValueStr specKey skuCode sellPrice lineationPrice costPrice
    stock lockedStock availableStock version status }`;

export const goodsQuery = `query ConsoleEditor($id: ID!) {
  goods(id: $id) { ${goodsFields} }
  categories { id name children { id name } }
}`;

export const goodsOnlyQuery = `query ConsoleEditorReload($id: ID!) { goods(id: $id) { ${goodsFields} } }`;

export const updateGoods = `mutation ConsoleUpdateGoods($input: UpdateGoodsInput!) { updateGoods(input: $input) { id version } }`;

export const updateGoodsSpecs = `mutation ConsoleUpdateSpecs($input: UpdateGoodsSpecsInput!) {
  updateGoodsSpecs(input: $input) { id version specs { id name values { id name } } skus(includeDisabled: true) { id specKey specValueStr } }
}`;

export const setGoodsStatus = `mutation ConsoleStatus($id: ID!, $status: GoodsStatus!) { setGoodsStatus(goodsId: $id, status: $status) { id version } }`;

export const setGoodsStockMode = `mutation ConsoleStockMode($id: ID!, $mode: StockMode!) { setGoodsStockMode(goodsId: $id, mode: $mode) { id version } }`;

export const adjustStock = `mutation ConsoleAdjustStock($input: AdjustStockInput!) { adjustStock(input: $input) { id stock availableStock } }`;

export const ledgerQuery = `query ConsoleLedger($id: ID!, $after: String) {
  stockLedger(itemId: $id, first: 20, after: $after) {
    edges { node { id changeType changeNum beforeStock afterStock bizType bizSn remark createdAt poolId } }
    pageInfo { hasNextPage endCursor }
  }
}`;

export const poolsQuery = `query ConsolePools($id: ID!) {
  stockPools(itemId: $id, first: 50) {
    edges { node { id name price quantity stock lockedStock availableStock sold perBuyerLimit startsAt endsAt status } }
  }
}`;

export const createPool = `mutation ConsoleCreatePool($input: CreateStockPoolInput!) { createStockPool(input: $input) { id } }`;

export const closePool = `mutation ConsoleClosePool($id: ID!) { closeStockPool(poolId: $id) { id status } }`;

export const orderQuery = `query ConsoleOrder($sn: String!) {
  order(orderSn: $sn) { orderSn status amount currency createdAt needsReview lines { itemId specValueStr quantity unitPrice } }
}`;

export const refundOrder = `mutation ConsoleRefund($sn: String!, $reason: String!) { refundOrder(orderSn: $sn, reason: $reason) { orderSn status } }`;
