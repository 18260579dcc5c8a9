// Card signatures with @a2a-js/sdk's own helpers (generateAgentCardSignature,
// verifyAgentCardSignature), for the Go interop tests:
//
//   node card_signature.mjs verify CARD.json PUBLIC_JWK.json
//       exits 0 and prints "verified" when the SDK verifies the card with
//       that key (looked up by the signature's kid), 1 otherwise.
//   node card_signature.mjs sign CARD.json PRIVATE_JWK.json
//       prints the card signed by the SDK (ES256, kid from the JWK, typ JOSE).
import { readFileSync } from 'node:fs';
import { generateAgentCardSignature, verifyAgentCardSignature } from '@a2a-js/sdk';

const [mode, cardFile, keyFile] = process.argv.slice(2);
const card = JSON.parse(readFileSync(cardFile, 'utf8'));
const jwk = JSON.parse(readFileSync(keyFile, 'utf8'));
console.debug = () => {}; // the SDK logs each failed signature at debug level

if (mode === 'verify') {
  const verify = verifyAgentCardSignature(async (kid) => {
    if (kid !== jwk.kid) throw new Error(`unknown kid ${kid}`);
    return jwk;
  });
  try {
    await verify(card);
    console.log('verified');
  } catch (e) {
    console.log(`not verified: ${e.message}`);
    process.exit(1);
  }
} else if (mode === 'sign') {
  const sign = generateAgentCardSignature(jwk, { alg: jwk.alg, kid: jwk.kid, typ: 'JOSE' });
  console.log(JSON.stringify(await sign(card)));
} else {
  console.error('usage: card_signature.mjs verify|sign CARD.json KEY.json');
  process.exit(2);
}
