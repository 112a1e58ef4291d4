import * as variantRepository from '../../src/variants/variant-repository.js';
import { call, callerReadSample, FIRST_PAGE, SAMPLE, type RepositoryFile } from './sample.js';

const fields = { product_id: 'P-1', sku: 'SKU-2', name: 'Blue shirt', price: 1999, attributes: { color: 'blue' } };
const filter = { q: 'shirt', product_id: 'P-1', in_stock: true };

export const variants: RepositoryFile[] = [
  {
    file: 'src/variants/variant-repository.ts',
    area: 'variants',
    entries: {
      variantById: callerReadSample(variantRepository.variantById, SAMPLE.variantId),
      variantBySku: callerReadSample(variantRepository.variantBySku, 'sku-1'),
      findVariantById: call(variantRepository.findVariantById, SAMPLE.variantId),
      findVariantByIdForUpdate: call(variantRepository.findVariantByIdForUpdate, SAMPLE.variantId),
      insertVariant: call(variantRepository.insertVariant, SAMPLE.newId, fields),
      replaceVariantFields: call(variantRepository.replaceVariantFields, SAMPLE.variantId, { ...fields, sku: 'SKU-1' }),
      lockVariantsBySku: call(variantRepository.lockVariantsBySku, ['sku-1']),
      existingVariantIds: call(variantRepository.existingVariantIds, [SAMPLE.variantId]),
      variantsWithAttributes: call(variantRepository.variantsWithAttributes, [{ productId: 'P-1', attributes: { color: 'red' } }]),
      deleteVariant: call(variantRepository.deleteVariant, SAMPLE.newId),
      variantsOfProductPage: call(variantRepository.variantsOfProductPage, 'P-1', FIRST_PAGE),
      countVariantsOfProduct: call(variantRepository.countVariantsOfProduct, 'P-1'),
      variantsPage: call(variantRepository.variantsPage, filter, FIRST_PAGE),
      variantsOldestFirstPage: call(variantRepository.variantsOldestFirstPage, filter, FIRST_PAGE),
      attributeKeysOf: call(variantRepository.attributeKeysOf, filter),
      countVariants: call(variantRepository.countVariants, filter),
    },
  },
];
