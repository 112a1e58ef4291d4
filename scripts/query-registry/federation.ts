import * as federatedSignInRepository from '../../src/federation/federated-signin-repository.js';
import * as identityRepository from '../../src/federation/identity-repository.js';
import * as providerRepository from '../../src/federation/provider-repository.js';
import { call, callerReadSample, SAMPLE, type RepositoryFile } from './sample.js';

export const federation: RepositoryFile[] = [
  {
    file: 'src/federation/provider-repository.ts',
    area: 'federation',
    entries: {
      providersByName: callerReadSample(providerRepository.providersByName),
      providerById: callerReadSample(providerRepository.providerById, SAMPLE.providerId),
      lockProvider: call(providerRepository.lockProvider, SAMPLE.providerId),
      insertProvider: call(providerRepository.insertProvider, {
        id: SAMPLE.newId,
        name: 'Apple',
        issuer: 'https://appleid.apple.com',
        client_id: 'com.example.shop.signin',
        client_secret: null,
        scopes: ['openid', 'email'],
        button_label: 'Sign in with Apple',
        apple_team_id: 'TEAM123456',
        apple_key_id: 'KEY1234567',
        apple_private_key: 'sealed',
        discovery: '{}',
        discovered_at: SAMPLE.date,
        discovery_attempted_at: SAMPLE.date,
        created_at: SAMPLE.date,
        updated_at: SAMPLE.date,
      }),
      updateProvider: call(providerRepository.updateProvider, SAMPLE.providerId, { enabled: false, client_secret: 'sealed-again' }),
      deleteProvider: call(providerRepository.deleteProvider, SAMPLE.providerId),
      claimProviderDueForDiscovery: call(providerRepository.claimProviderDueForDiscovery, SAMPLE.date),
      storeRereadDiscovery: call(providerRepository.storeRereadDiscovery, SAMPLE.providerId, 'https://accounts.google.com', { issuer: 'https://accounts.google.com' }),
      enabledProviderById: call(providerRepository.enabledProviderById, SAMPLE.providerId),
      enabledProviderButtons: call(providerRepository.enabledProviderButtons),
      connectableProviders: call(providerRepository.connectableProviders),
      shareEnabledProvider: call(providerRepository.shareEnabledProvider, SAMPLE.providerId),
    },
  },
  {
    file: 'src/federation/identity-repository.ts',
    area: 'federation',
    entries: {
      identitiesOfUser: call(identityRepository.identitiesOfUser, SAMPLE.userId),
      insertIdentity: call(identityRepository.insertIdentity, { id: SAMPLE.newId, user_id: SAMPLE.userId, provider_id: SAMPLE.providerId, subject: 'another-sub', email: null, linked_at: SAMPLE.date }),
      deleteIdentityOfUser: call(identityRepository.deleteIdentityOfUser, SAMPLE.userId, SAMPLE.identityId),
      deleteIdentitiesOfUser: call(identityRepository.deleteIdentitiesOfUser, SAMPLE.userId),
      countIdentitiesOfProvider: call(identityRepository.countIdentitiesOfProvider, SAMPLE.providerId),
      lockIdentitySubject: call(identityRepository.lockIdentitySubject, SAMPLE.providerId, 'a-sub'),
      lockIdentityBySubject: call(identityRepository.lockIdentityBySubject, SAMPLE.providerId, 'a-sub'),
      markIdentityUsed: call(identityRepository.markIdentityUsed, SAMPLE.identityId),
    },
  },
  {
    file: 'src/federation/federated-signin-repository.ts',
    area: 'federation',
    entries: {
      insertFederatedSignIn: call(federatedSignInRepository.insertFederatedSignIn, {
        id: SAMPLE.newId,
        provider_id: SAMPLE.providerId,
        state_hash: 'a'.repeat(64),
        nonce: 'a-nonce',
        code_verifier: 'a-verifier',
        browser_hash: 'b'.repeat(64),
        authorization_query: '?client_id=app',
        created_at: SAMPLE.date,
        expires_at: SAMPLE.date,
      }),
      spendFederatedSignIn: call(federatedSignInRepository.spendFederatedSignIn, { stateHash: 'a'.repeat(64), providerId: SAMPLE.providerId, browserHash: 'b'.repeat(64) }),
      deleteStaleFederatedSignIns: call(federatedSignInRepository.deleteStaleFederatedSignIns, SAMPLE.date),
    },
  },
];
