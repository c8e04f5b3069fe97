// Test hook (DemoShop with test_hooks): waits for the server's stock events for this product and
// replaces the buy box with the server's new rendering, so every node in it is new, then tells
// the server it is done. Failures back off for a second; navigation away simply ends it.
(async () => {
  const box = () => document.getElementById('buy-box');
  const product = box().dataset.product;
  let after = Number(box().dataset.seq);
  const pause = () => new Promise((resolve) => setTimeout(resolve, 1000));
  for (;;) {
    let response;
    try {
      const query = new URLSearchParams({ product, after: String(after) });
      response = await fetch('/shop/api/stock-events?' + query, { cache: 'no-store' });
    } catch {
      await pause();
      continue;
    }
    if (response.status === 204) continue; // nothing happened within the poll's time
    if (!response.ok) {
      await pause();
      continue;
    }
    const event = await response.json();
    const fresh = document.createElement('template');
    fresh.innerHTML = event.html;
    box().replaceWith(fresh.content);
    after = event.seq;
    await fetch('/shop/api/stock-ack', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ seq: String(event.seq) }),
    }).catch(() => {});
  }
})();
