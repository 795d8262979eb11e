// The model catalog is shared by the OpenAI and Gemini listings (api/model-catalog.ts); this name
// stays for the Gemini relay's wiring until that moves to src/wiring/.
export type { ModelCatalogDeps } from "../model-catalog.js";
