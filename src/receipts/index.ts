// The public surface of receipts/: a broker delivery's receipt ("confirmed by …") for the lists
// that show a delivery's outcome (the API's LastReceipt, hookctl deliveries, the console's log).
export { type AttemptSource, LAST_RECEIPT_CAP, lastReceipts, receiptOf } from './receipts.js';
