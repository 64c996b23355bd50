import { ContractFactory, type Contract, type Wallet } from 'ethers';
import { compileSolidity } from '../../devnet/erc20';

/**
 * Contracts that send ether by internal calls, as exchanges' batch withdrawals, Safe and ERC-4337 wallets
 * do: a forwarder, a batch, calls that pay and then revert (caught or ignored), a DELEGATECALL that carries
 * msg.value in the trace but moves nothing, a transaction that pays and then fails, and a SELFDESTRUCT.
 */
const SOURCE = `// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

contract Relay {
    function pass(address payable to) external payable {
        (bool ok, ) = to.call{value: msg.value}("");
        require(ok, "pay failed");
    }
    function passThenRevert(address payable to) external payable {
        (bool ok, ) = to.call{value: msg.value}("");
        require(ok, "pay failed");
        revert("changed its mind");
    }
}

contract Bomb {
    constructor(address payable to) payable { selfdestruct(to); }
}

contract Payer {
    Relay public immutable relay;
    constructor() { relay = new Relay(); }

    function forward(address payable to) external payable {
        (bool ok, ) = to.call{value: msg.value}("");
        require(ok, "forward failed");
    }

    function batch(address payable[] calldata tos, uint256[] calldata amounts) external payable {
        for (uint256 i = 0; i < tos.length; i++) {
            (bool ok, ) = tos[i].call{value: amounts[i]}("");
            require(ok, "payout failed");
        }
    }

    /** bad is paid twice inside calls that revert (one caught, one ignored); good through the relay. */
    function payOneRevertOthers(address payable good, address payable bad, uint256 goodAmount, uint256 badAmount) external payable {
        try relay.passThenRevert{value: badAmount}(bad) {} catch {}
        (bool ignored, ) = address(relay).call{value: badAmount}(abi.encodeCall(Relay.passThenRevert, (bad)));
        ignored;
        relay.pass{value: goodAmount}(good);
    }

    function delegateTo(address to) external payable {
        (bool ok, ) = to.delegatecall("");
        require(ok, "delegatecall failed");
    }

    function payThenFail(address payable to) external payable {
        (bool ok, ) = to.call{value: msg.value}("");
        require(ok, "pay failed");
        revert("the transaction fails");
    }

    function payBySelfdestruct(address payable to) external payable {
        new Bomb{value: msg.value}(to);
    }
}
`;

let compiled: ReturnType<typeof compileSolidity> | undefined;

/** Deploys the Payer (and its Relay) from `deployer`. */
export async function deployPayer(deployer: Wallet): Promise<Contract> {
  compiled ??= compileSolidity(SOURCE, ['Payer']);
  const { abi, bytecode } = compiled.Payer;
  const c = await new ContractFactory(abi as never, bytecode, deployer).deploy();
  await c.waitForDeployment();
  return c as Contract;
}
