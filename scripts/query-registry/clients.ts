import * as clientRepository from '../../src/clients/client-repository.js';
import { call, callerReadSample, FIRST_PAGE, SAMPLE, type RepositoryFile } from './sample.js';


export const clients: RepositoryFile[] = [
  {
    file: 'src/clients/client-repository.ts',
    area: 'clients',
    entries: {
      clientById: callerReadSample(clientRepository.clientById, SAMPLE.clientId),
      clientsPage: call(clientRepository.clientsPage, FIRST_PAGE),
      countClients: call(clientRepository.countClients),
      lockClient: call(clientRepository.lockClient, SAMPLE.clientId),
      insertClient: call(clientRepository.insertClient, {
        id: SAMPLE.newId,
        name: 'Shop web app',
        description: null,
        type: 'confidential',
        scopes: ['openid', 'email'],
        status: 'active',
        rate_limit: null,
        redirect_uris: ['https://shop.example.com/callback'],
        post_logout_redirect_uris: [],
        first_party: true,
        logo_uri: null,
        id_token_signed_response_alg: 'RS256',
        created_by: SAMPLE.userId,
        created_at: SAMPLE.date,
        updated_at: SAMPLE.date,
      }),
      updateClient: call(clientRepository.updateClient, SAMPLE.clientId, { name: 'Shop front, renamed' }),
      secretsOfClients: call(clientRepository.secretsOfClients, [SAMPLE.clientId]),
      insertSecret: call(clientRepository.insertSecret, SAMPLE.clientId, { hash: 'new-secret-hash', prefix: 'sk_2' }),
      expireOtherSecrets: call(clientRepository.expireOtherSecrets, SAMPLE.clientId, SAMPLE.secretId, 3600),
      deleteSecrets: call(clientRepository.deleteSecrets, SAMPLE.clientId, SAMPLE.secretId),
      noteClientUsed: call(clientRepository.noteClientUsed, SAMPLE.clientId, SAMPLE.secretId),
      findUsableSecret: call(clientRepository.findUsableSecret, 'secret-hash'),
      findUndeletedClient: call(clientRepository.findUndeletedClient, SAMPLE.clientId),
    },
  },
];
