// SPDX-License-Identifier: MIT
// A USDC-like test token for the offline EVM payment stack: ERC-20 balances with 6 decimals and
// EIP-3009 transferWithAuthorization (the v,r,s form and the bytes form, EOA signatures only),
// authorizationState and the AuthorizationUsed event, under the EIP-712 domain
// {name "USDC", version "2", chainId, verifyingContract = this address} that Base Sepolia USDC has.
// The domain separator is computed on every call from block.chainid and address(this), and the
// contract has no immutables and no constructor state, so its runtime code can be placed at the Base
// Sepolia USDC address with anvil_setCode. Balances are minted by MINTER (anvil's first account).
pragma solidity ^0.8.20;

contract UsdcLike {
    // Storage layout (slots): 0 balances, 1 authorization states, 2 total supply.
    mapping(address => uint256) private balances;
    mapping(address => mapping(bytes32 => bool)) private usedAuthorizations;
    uint256 private supply;

    address private constant MINTER = 0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266;
    bytes32 private constant DOMAIN_TYPEHASH =
        keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)");
    bytes32 private constant TRANSFER_WITH_AUTHORIZATION_TYPEHASH = keccak256(
        "TransferWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)"
    );
    // secp256k1n / 2: signatures with a higher s are malleable copies and are refused.
    uint256 private constant HALF_ORDER = 0x7FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF5D576E7357A4501DDFE92F46681B20A0;

    event Transfer(address indexed from, address indexed to, uint256 value);
    event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce);

    function name() external pure returns (string memory) { return "USDC"; }
    function symbol() external pure returns (string memory) { return "USDC"; }
    function version() external pure returns (string memory) { return "2"; }
    function decimals() external pure returns (uint8) { return 6; }
    function totalSupply() external view returns (uint256) { return supply; }
    function balanceOf(address account) external view returns (uint256) { return balances[account]; }

    function DOMAIN_SEPARATOR() public view returns (bytes32) {
        return keccak256(abi.encode(DOMAIN_TYPEHASH, keccak256("USDC"), keccak256("2"), block.chainid, address(this)));
    }

    function authorizationState(address authorizer, bytes32 nonce) external view returns (bool) {
        return usedAuthorizations[authorizer][nonce];
    }

    function mint(address to, uint256 value) external {
        require(msg.sender == MINTER, "not minter");
        supply += value;
        balances[to] += value;
        emit Transfer(address(0), to, value);
    }

    function transfer(address to, uint256 value) external returns (bool) {
        move(msg.sender, to, value);
        return true;
    }

    function transferWithAuthorization(
        address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce,
        uint8 v, bytes32 r, bytes32 s
    ) external {
        authorize(from, to, value, validAfter, validBefore, nonce, v, r, s);
    }

    function transferWithAuthorization(
        address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce,
        bytes memory signature
    ) external {
        require(signature.length == 65, "FiatTokenV2: invalid signature length");
        bytes32 r;
        bytes32 s;
        uint8 v;
        assembly {
            r := mload(add(signature, 0x20))
            s := mload(add(signature, 0x40))
            v := byte(0, mload(add(signature, 0x60)))
        }
        authorize(from, to, value, validAfter, validBefore, nonce, v, r, s);
    }

    function authorize(
        address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce,
        uint8 v, bytes32 r, bytes32 s
    ) private {
        require(block.timestamp > validAfter, "FiatTokenV2: authorization is not yet valid");
        require(block.timestamp < validBefore, "FiatTokenV2: authorization is expired");
        require(!usedAuthorizations[from][nonce], "FiatTokenV2: authorization is used or canceled");
        bytes32 structHash = keccak256(
            abi.encode(TRANSFER_WITH_AUTHORIZATION_TYPEHASH, from, to, value, validAfter, validBefore, nonce)
        );
        bytes32 digest = keccak256(abi.encodePacked("\x19\x01", DOMAIN_SEPARATOR(), structHash));
        require(uint256(s) <= HALF_ORDER, "FiatTokenV2: invalid signature");
        address signer = ecrecover(digest, v, r, s);
        require(signer != address(0) && signer == from, "FiatTokenV2: invalid signature");
        usedAuthorizations[from][nonce] = true;
        emit AuthorizationUsed(from, nonce);
        move(from, to, value);
    }

    function move(address from, address to, uint256 value) private {
        require(balances[from] >= value, "ERC20: transfer amount exceeds balance");
        balances[from] -= value;
        balances[to] += value;
        emit Transfer(from, to, value);
    }
}
